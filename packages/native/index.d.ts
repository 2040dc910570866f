/**
 * The Rust N-API module's surface. Graphs cross the boundary once as CSR typed arrays,
 * read in place; large results come back as typed arrays. Malformed input throws an
 * `Error` with `code === 'CAIRN_NATIVE_BAD_INPUT'` and a message naming the argument.
 * Cycles are data, never exceptions.
 */

/** An ordering, or the cycle that prevents one (`cycle[k+1]` is a dependency of `cycle[k]`). */
export type NativeOrder = { ok: true; order: Uint32Array } | { ok: false; cycle: Uint32Array };

/** Step hashes (16 ASCII hex digits per node), or the cycle that prevents hashing. */
export type NativeFingerprints = { ok: true; hex: Uint8Array } | { ok: false; cycle: Uint32Array };

/** What `readFiles` read (see there). */
export interface NativeFileBatch {
  readonly bytes: Uint8Array;
  readonly ends: Uint32Array;
  readonly errors: Uint32Array;
}

/** The functions exported by `cairn-native.<platform>.node`. */
export interface NativeBinding {
  /** Version of this surface; the loader refuses a build whose version differs. */
  readonly abiVersion: number;
  /** Size in bytes of a streaming XXH64 state buffer. */
  readonly xxh64StateBytes: number;
  /** XXH64 of `data` (a string is hashed as UTF-8). The seed is taken mod 2^64. @default seed 0n */
  xxh64(data: Uint8Array | string, seed?: bigint): bigint;
  /** XXH64 as 16 lowercase hex digits. @default seed 0n */
  xxh64Hex(data: Uint8Array | string, seed?: bigint): string;
  /** Resets `state` (a `Uint8Array(xxh64StateBytes)` owned by JS) to an empty hasher. @default seed 0n */
  xxh64Init(state: Uint8Array, seed?: bigint): void;
  /** Feeds `data` into `state`. */
  xxh64Update(state: Uint8Array, data: Uint8Array | string): void;
  /** The digest of everything fed into `state`; the state is unchanged. */
  xxh64Digest(state: Uint8Array): bigint;
  /** Kahn's algorithm, dependencies first (see `CoreBackend.toposort` in @cairn/core). */
  toposort(offsets: Uint32Array, deps: Uint32Array): NativeOrder;
  /** Post-order expansion from `roots`; mutates `seen` (see `CoreBackend.expand` in @cairn/core). */
  expand(offsets: Uint32Array, deps: Uint32Array, roots: Uint32Array, built: Uint8Array, seen: Uint8Array): NativeOrder;
  /**
   * Every node's Merkle step hash per docs/identity.md. `known` (optional, `16 * n` bytes) gives
   * hashes in advance: a node whose 16 bytes are hex digits is taken as hashed (its dependencies
   * and attrs are not read); all-zero bytes mean "compute".
   */
  fingerprintAll(
    offsets: Uint32Array,
    deps: Uint32Array,
    nameOffsets: Uint32Array,
    names: Uint8Array,
    attrOffsets: Uint32Array,
    attrs: Uint8Array,
    known?: Uint8Array,
  ): NativeFingerprints;
  /**
   * Steps of one lowering sharing a name (bytes of the `names` table) and a version id:
   * flattened pairs `(i, j)`, ordered by `i`, where `j` is the lowest-index node equal to `i`.
   */
  duplicateSteps(nameOffsets: Uint32Array, names: Uint8Array, versionOf: Uint32Array): Uint32Array;
  /** Writes XXH64 of every entry of the table `(offsets, bytes)` as 16 hex digits into `out`, entry `i` at byte `at + 16i`. */
  xxh64HexMany(offsets: Uint32Array, bytes: Uint8Array, out: Uint8Array, at: number): void;
  /**
   * One lowering's step hashes (docs/identity.md, "Lowered steps"), 16 hex digits per node.
   * Nodes are numbered dependencies first (each dependency index below its dependent's);
   * node `i`'s version is entry `versionOf[i]` of the `versions` table, its config fingerprint
   * `fingerprints[16i, 16i + 16)`; `extras[i]` is canonical text placed after the `deps`
   * member of its `hashAttrs` (usually empty). `known` (`16 * n` bytes) gives some hashes in
   * advance, as `fingerprintAll`'s does: those nodes are copied, not computed. With `out`
   * (`16 * n` bytes, sharing memory with no table but possibly `known` itself) the hashes are
   * written there and `out` is returned: no new array.
   */
  loweredIdentities(
    offsets: Uint32Array,
    deps: Uint32Array,
    nameOffsets: Uint32Array,
    names: Uint8Array,
    versionOf: Uint32Array,
    versionOffsets: Uint32Array,
    versions: Uint8Array,
    fingerprints: Uint8Array,
    extraOffsets: Uint32Array,
    extras: Uint8Array,
    known?: Uint8Array,
    out?: Uint8Array,
  ): Uint8Array;
  /**
   * Reads the file `name + suffix` for every name in `names` (separated by NUL bytes; `''` names
   * none), relative to the directory `base` (`''`: names are paths as they are), on a thread of
   * libuv's pool; several calls at once are read on several threads. File `i` is
   * `bytes[ends[i-1], ends[i])` (`ends[-1]` = 0) when `errors[i]` is 0; else it has no bytes and
   * `errors[i]` is an errno plus `1 << 16` when `open` failed (a missing file, or an empty name:
   * `65536 + ENOENT`) or `2 << 16` when `read` did, or `0xffffffff`: not read, the batch would
   * pass 4 GiB. Bad arguments throw at once (as every function here does); the promise rejects
   * only on an N-API failure. @default suffix ''
   */
  readFiles(base: string | Uint8Array, names: string | Uint8Array, suffix?: string | Uint8Array): Promise<NativeFileBatch>;
}

/** The loaded module, or `null` when none could be loaded (or `CAIRN_NATIVE=0`). */
export declare const binding: NativeBinding | null;
/** `'native'` when `binding` is loaded, else `'js'`. */
export declare const backend: 'native' | 'js';
/** Why each candidate failed, in the order tried (each has `code` and `path`). */
export declare const loadErrors: ReadonlyArray<Error & { code: string; path: string }>;
/** Absolute path of the loaded `.node` file, or `null`. */
export declare const loadedFrom: string | null;
/** The napi-rs platform triple of this process, e.g. `linux-x64-gnu`. */
export declare function platformTriple(): string;

/** One platform with a prebuilt package `@cairn/native-<triple>`. */
export interface NativePlatform {
  /** The napi-rs triple, e.g. `linux-x64-gnu`; the package is `@cairn/native-<triple>`. */
  readonly triple: string;
  /** `process.platform` it installs on (npm's `os` field). */
  readonly os: string;
  /** `process.arch` it installs on (npm's `cpu` field). */
  readonly cpu: string;
  /** npm's `libc` field (`glibc` or `musl`), or `null` off Linux. */
  readonly libc: 'glibc' | 'musl' | null;
  /** The Rust target it is built for. */
  readonly rustTarget: string;
  /** What the binary needs to load, e.g. `glibc ≥ 2.17`. */
  readonly minimum: string;
}

/** Every platform with a prebuilt package. */
export declare const platforms: readonly NativePlatform[];

/** What the loader decided, as data (for `cairn config` and diagnostics). */
export interface NativeStatus {
  /** `'native'` when a binary loaded, else `'js'` (the TypeScript fallback answers). */
  readonly backend: 'native' | 'js';
  /** This process's triple, e.g. `linux-x64-gnu`. */
  readonly platform: string;
  /** The package with this platform's prebuilt binary, or `null` when none is published. */
  readonly package: string | null;
  /** Absolute path of the loaded `.node` file, or `null`. */
  readonly loadedFrom: string | null;
  /** One phrase saying why: `loaded /path`, `CAIRN_NATIVE=0`, `@cairn/native-linux-x64-gnu is not installed`… */
  readonly reason: string;
  /**
   * The line announced on stderr (once per process tree) when the fallback answers, or `null`
   * when the native module loaded or `CAIRN_NATIVE=0` chose the fallback.
   */
  readonly notice: string | null;
}

/** What the loader decided. */
export declare const status: NativeStatus;
