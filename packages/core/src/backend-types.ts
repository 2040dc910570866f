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
  /** Every node's Merkle step hash as defined in docs/identity.md, in one call. */
  fingerprintAll(graph: CsrGraph, names: ByteTable, attrs: ByteTable): FingerprintResult;
}

/** A streaming XXH64 hasher. */
export interface Xxh64Stream {
  /** Feed more bytes (a string is fed as UTF-8). Returns `this`. */
  update(data: Uint8Array | string): Xxh64Stream;
  /** The digest of everything fed so far. The hasher stays usable. */
  digest(): bigint;
}
