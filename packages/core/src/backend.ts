import nativeLoader from '@cairn/native';
import type { NativeBinding } from '@cairn/native';
import type { BackendKind, ByteTable, CoreBackend, CsrGraph, LoweredTables, Xxh64Stream } from './backend-types.js';
import { CairnError } from './errors.js';
import { expand } from './graph/expand.js';
import { fingerprintAll } from './graph/fingerprint-all.js';
import { duplicateSteps, loweredIdentities, loweredIdentitiesPacked, xxh64HexMany } from './graph/lowered.js';
import { toposort } from './graph/toposort.js';
import { createXxh64, xxh64, xxh64Hex } from './hash/xxh64.js';

/**
 * Chooses between the Rust N-API module and the TypeScript fallback, once, at import.
 * `CAIRN_NATIVE=0` forces the fallback; `CAIRN_NATIVE=1` makes a missing native build an error
 * (`CAIRN_NATIVE_UNAVAILABLE`, thrown by `@cairn/native` when it is first imported).
 */

function checkData(data: unknown): void {
  if (typeof data !== 'string' && !(data instanceof Uint8Array)) {
    throw new CairnError('CAIRN_GRAPH_INPUT', 'data must be a Uint8Array or a string');
  }
}

/** The pure TypeScript backend (XXH64 from `xxhash-wasm` once ready, else pure TS). */
export const jsBackend: CoreBackend = Object.freeze({
  kind: 'js' as const,
  xxh64(data: Uint8Array | string, seed?: bigint): bigint {
    checkData(data);
    return xxh64(data, seed);
  },
  xxh64Hex(data: Uint8Array | string): string {
    checkData(data);
    return xxh64Hex(data);
  },
  createXxh64(seed?: bigint): Xxh64Stream {
    const inner = createXxh64(seed);
    const stream: Xxh64Stream = {
      update(data) {
        checkData(data);
        inner.update(data);
        return stream;
      },
      digest: () => inner.digest(),
    };
    return stream;
  },
  toposort,
  expand,
  fingerprintAll,
  duplicateSteps,
  xxh64HexMany,
  loweredIdentities,
  loweredIdentitiesPacked,
});

/** Rethrows the native module's bad-input errors as `CAIRN_GRAPH_INPUT`, as the fallback throws them. */
function mapNativeError(err: unknown): unknown {
  const e = err as { code?: unknown; message?: unknown };
  if (e && e.code === 'CAIRN_NATIVE_BAD_INPUT') return new CairnError('CAIRN_GRAPH_INPUT', String(e.message), { cause: err });
  return err;
}

/**
 * The last result of the native `fingerprintAll`, kept: N-API builds its shape property by
 * property, and V8 drops that shape, and the optimized identity pass that reads it, once no
 * result lives (between two runs of a process). Bench row "10k chain". It holds one identity
 * batch's digests at most (identity.ts: 4,096 steps, 64 KiB).
 */
let keptFingerprint: unknown;

/** Adapts the N-API binding to {@link CoreBackend}. */
export function adaptNative(b: NativeBinding): CoreBackend {
  class NativeXxh64 implements Xxh64Stream {
    private readonly state = new Uint8Array(b.xxh64StateBytes);
    constructor(seed?: bigint) {
      b.xxh64Init(this.state, seed);
    }
    update(data: Uint8Array | string): this {
      try {
        b.xxh64Update(this.state, data);
      } catch (err) {
        throw mapNativeError(err);
      }
      return this;
    }
    digest(): bigint {
      return b.xxh64Digest(this.state);
    }
  }
  return Object.freeze({
    kind: 'native' as const,
    xxh64(data: Uint8Array | string, seed?: bigint): bigint {
      try {
        return b.xxh64(data, seed);
      } catch (err) {
        throw mapNativeError(err);
      }
    },
    xxh64Hex(data: Uint8Array | string): string {
      try {
        return b.xxh64Hex(data);
      } catch (err) {
        throw mapNativeError(err);
      }
    },
    createXxh64: (seed?: bigint): Xxh64Stream => new NativeXxh64(seed),
    toposort(g: CsrGraph) {
      try {
        return b.toposort(g.offsets, g.deps);
      } catch (err) {
        throw mapNativeError(err);
      }
    },
    expand(g: CsrGraph, roots: Uint32Array, built: Uint8Array, seen: Uint8Array) {
      try {
        return b.expand(g.offsets, g.deps, roots, built, seen);
      } catch (err) {
        throw mapNativeError(err);
      }
    },
    fingerprintAll(g: CsrGraph, names: ByteTable, attrs: ByteTable, known?: Uint8Array) {
      try {
        return (keptFingerprint = b.fingerprintAll(g.offsets, g.deps, names.offsets, names.bytes, attrs.offsets, attrs.bytes, known));
      } catch (err) {
        throw mapNativeError(err);
      }
    },
    duplicateSteps(names: ByteTable, versionOf: Uint32Array) {
      try {
        return b.duplicateSteps(names.offsets, names.bytes, versionOf);
      } catch (err) {
        throw mapNativeError(err);
      }
    },
    xxh64HexMany(table: ByteTable, out: Uint8Array, at: number) {
      try {
        b.xxh64HexMany(table.offsets, table.bytes, out, at);
      } catch (err) {
        throw mapNativeError(err);
      }
    },
    loweredIdentities(t: LoweredTables, out?: Uint8Array) {
      try {
        const { graph: g, names, versions, extras } = t;
        return b.loweredIdentities(g.offsets, g.deps, names.offsets, names.bytes, t.versionOf, versions.offsets, versions.bytes, t.fingerprints, extras.offsets, extras.bytes, t.known, out);
      } catch (err) {
        throw mapNativeError(err);
      }
    },
    loweredIdentitiesPacked(words: Uint32Array, bytes: Uint8Array) {
      try {
        b.loweredIdentitiesPacked(words, bytes);
      } catch (err) {
        throw mapNativeError(err);
      }
    },
  });
}

/** The native backend when the Rust module loaded, else `null` (parity tests use both). */
export const nativeBackend: CoreBackend | null = nativeLoader.binding ? adaptNative(nativeLoader.binding) : null;

function describeFailures(): string {
  return nativeLoader.loadErrors.map((e) => e.message).join('; ');
}

function choose(): { chosen: CoreBackend; reason: string; notice: boolean } {
  if (nativeBackend) return { chosen: nativeBackend, reason: `native: loaded ${nativeLoader.loadedFrom}`, notice: false };
  const mode = process.env.CAIRN_NATIVE;
  if (mode === '0') return { chosen: jsBackend, reason: 'js: CAIRN_NATIVE=0', notice: false };
  if (mode === '1') {
    // @cairn/native throws first; this guards against an older loader.
    throw new CairnError('CAIRN_NATIVE_UNAVAILABLE', `CAIRN_NATIVE=1 but the native module is unavailable: ${describeFailures()}`, {
      cause: new AggregateError(nativeLoader.loadErrors, 'native load failures'),
    });
  }
  const notFound = nativeLoader.loadErrors.every((e) => e.code === 'CAIRN_NATIVE_NOT_FOUND');
  if (notFound) {
    return {
      chosen: jsBackend,
      reason: `js: native build not found (${describeFailures()})`,
      // An explicit path that does not exist is a mistake worth one line.
      notice: Boolean(process.env.CAIRN_NATIVE_PATH),
    };
  }
  return { chosen: jsBackend, reason: `js: native module failed to load (${describeFailures()})`, notice: true };
}

const choice = choose();

/** Which backend answers: `'native'` (Rust N-API) or `'js'` (TypeScript fallback). */
export const backend: BackendKind = choice.chosen.kind;

/** Why that backend was chosen, e.g. `native: loaded /path` or `js: CAIRN_NATIVE=0`. */
export const backendReason: string = choice.reason;

const NOTICE = Symbol.for('cairn.backendNotice');
const g = globalThis as Record<symbol, unknown>;
if ((choice.notice || process.env.CAIRN_DEBUG) && !g[NOTICE]) {
  g[NOTICE] = true;
  process.stderr.write(`[cairn] backend ${backendReason}\n`);
}

/** The chosen backend. */
export function getBackend(): CoreBackend {
  return choice.chosen;
}
