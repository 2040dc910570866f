import type { NativeFunctions } from './binding.js';

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

export type { NativeFileBatch, NativeFunctions } from './binding.js';

/** The exports built on Linux only (src/js_spawn.rs). */
type LinuxOnly = 'spawnGroup' | 'spawnGroupAvailable';

/**
 * The functions exported by `cairn-native.<platform>.node` (binding.d.ts, generated from the
 * `#[napi]` exports; `spawnGroup` and `spawnGroupAvailable` on Linux only) and its two constants.
 */
export interface NativeBinding extends Omit<NativeFunctions, LinuxOnly>, Partial<Pick<NativeFunctions, LinuxOnly>> {
  /** Version of this surface; the loader refuses a build whose version differs. */
  readonly abiVersion: number;
  /** Size in bytes of a streaming XXH64 state buffer. */
  readonly xxh64StateBytes: number;
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
