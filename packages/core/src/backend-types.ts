/**
 * The contract between `@cairn/core` and its two hashing/graph backends: the Rust
 * N-API module (`@cairn/native`) and the pure TypeScript fallback. Both must give
 * bit-identical answers (see docs/identity.md and fixtures/golden/).
 */

/** Which implementation answers: the Rust module or the TypeScript fallback. */
export type BackendKind = 'native' | 'js';

/**
 * A directed graph in CSR form: node `i` depends on `deps[offsets[i] .. offsets[i+1])`.
 * Edges point from a step to its dependencies.
 */
export interface CsrGraph {
  /** `n + 1` monotone offsets into `deps`; `offsets[0] === 0`. */
  readonly offsets: Uint32Array;
  /** Dependency indices, each `< n`. */
  readonly deps: Uint32Array;
}

/** Variable-length byte strings, one per node, packed CSR-style. */
export interface ByteTable {
  /** `n + 1` monotone offsets into `bytes`. */
  readonly offsets: Uint32Array;
  /** The concatenated bytes. */
  readonly bytes: Uint8Array;
}

/**
 * The outcome of an ordering: the order, or the cycle that prevents one.
 * A cycle is data, not an exception: `cycle[k+1]` is a dependency of `cycle[k]`,
 * and the last element depends on the first (a self-loop is `[i]`).
 */
export type OrderResult =
  | { readonly ok: true; readonly order: Uint32Array }
  | { readonly ok: false; readonly cycle: Uint32Array };

/** Hex digests (16 ASCII hex digits per node), or the cycle that prevents hashing. */
export type FingerprintResult =
  | { readonly ok: true; readonly hex: Uint8Array }
  | { readonly ok: false; readonly cycle: Uint32Array };

/**
 * One lowering's `apply` steps as tables, numbered dependencies first (every dependency
 * index is below its dependent's). See docs/identity.md, "Lowered steps".
 */
export interface LoweredTables {
  /** Node `i`'s dependencies in the handle's first-seen order. */
  readonly graph: CsrGraph;
  /** Step names. */
  readonly names: ByteTable;
  /** Node `i`'s version is entry `versionOf[i]` of `versions`. */
  readonly versionOf: Uint32Array;
  /** The distinct versions (any number of entries). */
  readonly versions: ByteTable;
  /** Config fingerprints (XXH64 of each step's canonical inputs text): 16 hex digits per node. */
  readonly fingerprints: Uint8Array;
  /** Canonical members placed after `"deps"` in node `i`'s `hashAttrs` (e.g. `,"expectedFingerprint":"…"`); usually empty. */
  readonly extras: ByteTable;
  /**
   * Hashes given in advance (`16 * n` bytes): a node whose 16 bytes are lowercase hex digits is
   * taken as hashed (its attrs are not read); all-zero means compute. A lowering session passes
   * the steps of earlier calls this way. @default every node computed
   */
  readonly known?: Uint8Array | undefined;
}

/** Everything core needs from a backend. */
export interface CoreBackend {
  /** Which implementation this is. */
  readonly kind: BackendKind;
  /** XXH64 of `data` (a string is hashed as UTF-8). @default seed 0n */
  xxh64(data: Uint8Array | string, seed?: bigint): bigint;
  /** XXH64 with seed 0 as 16 lowercase hex digits. */
  xxh64Hex(data: Uint8Array | string): string;
  /** A streaming XXH64 hasher. @default seed 0n */
  createXxh64(seed?: bigint): Xxh64Stream;
  /**
   * Kahn's algorithm, dependencies first. Ready nodes are taken FIFO, starting with the
   * dependency-free nodes in index order; a node's dependents are released in increasing index order.
   */
  toposort(graph: CsrGraph): OrderResult;
  /**
   * Post-order DFS from `roots` (in order, dependencies in listed order) over nodes not yet in `seen`;
   * a node with `built[i] !== 0` is emitted but not descended. Marks emitted nodes in `seen` (mutated).
   */
  expand(graph: CsrGraph, roots: Uint32Array, built: Uint8Array, seen: Uint8Array): OrderResult;
  /**
   * Every node's Merkle step hash as defined in docs/identity.md, in one call. `known`
   * (`16 * n` bytes) gives some hashes in advance: a node whose 16 bytes are lowercase hex
   * digits is taken as hashed (its attrs and dependencies are not read); all-zero means compute.
   */
  fingerprintAll(graph: CsrGraph, names: ByteTable, attrs: ByteTable, known?: Uint8Array): FingerprintResult;
  /**
   * Nodes sharing a name (bytes) and a version id with an earlier node: flattened pairs
   * `(i, j)` ordered by `i`, `j` the lowest-index node equal to `i`. Empty when all are unique.
   */
  duplicateSteps(names: ByteTable, versionOf: Uint32Array): Uint32Array;
  /** XXH64 of every entry of `table` as 16 hex digits, written into `out` from byte `at` (16 per entry). */
  xxh64HexMany(table: ByteTable, out: Uint8Array, at: number): void;
  /**
   * Every lowered step's step hash (16 hex digits per node), whose `hashAttrs` is
   * `{"deps":["name@version",…]<extra>,"fingerprint":"…","version":"…"}`. With `out`
   * (`16 * n` bytes; it may be `tables.known` itself, no other table) they are written there
   * and `out` is returned, instead of a new array.
   */
  loweredIdentities(tables: LoweredTables, out?: Uint8Array): Uint8Array;
  /**
   * {@link loweredIdentities} with the tables packed into two arrays, and the last `p` nodes'
   * fingerprints computed from their payloads (as {@link xxh64HexMany}) in the same call: for
   * callers that hash a few nodes at a time (one call of two arguments instead of two calls
   * of a dozen). `words`: `[n, e, v, p]`, then `offsets` (n + 1), `deps` (e), `nameOffsets`
   * (n + 1), `versionOf` (n), `versionOffsets` (v + 1), `extraOffsets` (n + 1),
   * `payloadOffsets` (p + 1). `bytes`: the names, the versions, the extras, the payloads, the
   * fingerprints (16n; the last p written), then the hashes (16n): the known ones given (as
   * `known`), all-zero ones computed in place. Elements after these are ignored.
   */
  loweredIdentitiesPacked(words: Uint32Array, bytes: Uint8Array): void;
}

/** A streaming XXH64 hasher. */
export interface Xxh64Stream {
  /** Feed more bytes (a string is fed as UTF-8). Returns `this`. */
  update(data: Uint8Array | string): Xxh64Stream;
  /** The digest of everything fed so far. The hasher stays usable. */
  digest(): bigint;
}
