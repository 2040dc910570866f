/**
 * The checks of a step's options that `apply()`, `lower()` and `new StepSpec()` share: the
 * option names each accepts, retries, timeouts, resources and the small typed fields. Every bad
 * value is a `CairnError` naming the step and the fix, never an exception from deeper down.
 */
import { ARTIFACT_STEP_BRAND, hasBrand, OUT_BRAND } from './brand.js';
import { canonicalize } from './canonical.js';
import { CairnError } from './errors.js';
import type { Layout } from './handle.js';
import { checkKnownKeys, describeValue } from './known-keys.js';
import { formatKeyPath, MAX_VALUE_DEPTH } from './limits.js';
import type { Resources } from './types.js';

/** The options `apply()` knows (`ApplyOptions`, `ApplyRuntimeOptions`). */
export const APPLY_KEYS: ReadonlySet<string> = new Set(['name', 'fn', 'version', 'inputs', 'runtime', 'pin', 'layout', 'resources', 'executor', 'expectedFingerprint', 'retries', 'timeoutMs', 'artifact']);

/** The layouts of unpinned `apply` steps. */
export const LAYOUTS: readonly Layout[] = Object.freeze(['content', 'versioned']);

/** A layout option: `'content'`, `'versioned'` or undefined; `where` names the option for messages. */
export function checkLayout(step: string | undefined, value: unknown, where = 'layout'): Layout | undefined {
  if (value === undefined || value === 'content' || value === 'versioned') return value;
  throw new CairnError(
    'CAIRN_INVALID_SPEC',
    `${step === undefined ? '' : `Step "${step}": `}${where} must be "content" ({name}/{version}-{hash}, the default) or "versioned" ({name}/{version}, Marin's fixed paths), got ${describeValue(value)}.`,
    { step },
  );
}

/**
 * Checks an `apply` step's runtime arguments: a plain object of plain data (no step handle and
 * no `OUT`: those are identity), beside inputs that are a plain object without the same keys.
 * Returns a deep-frozen copy.
 */
export function checkRuntime(step: string, runtime: unknown, inputs: unknown): Readonly<Record<string, unknown>> | undefined {
  if (runtime === undefined) return undefined;
  const fail = (what: string): never => {
    throw new CairnError('CAIRN_INVALID_SPEC', `Step "${step}": ${what}`, { step });
  };
  if (!isPlainObject(runtime)) return fail(`runtime must be a plain object of arguments such as { numWorkers: 8 }, got ${describeValue(runtime)}.`);
  if (!isPlainObject(inputs)) return fail(`with runtime arguments, inputs must be a plain object too (they are merged into one object for the function), got ${describeValue(inputs)}.`);
  for (const k of Object.keys(runtime)) {
    if (Object.hasOwn(inputs, k)) fail(`"${k}" is both in inputs and in runtime; keep it in inputs if it changes the result, in runtime if it does not.`);
  }
  const keys: (string | number)[] = [];
  const active: object[] = [];
  const walk = (v: unknown): void => {
    if (typeof v !== 'object' || v === null || active.includes(v)) return;
    if (hasBrand(v, ARTIFACT_STEP_BRAND) || hasBrand(v, OUT_BRAND)) {
      fail(`${formatKeyPath('runtime', keys)} is ${hasBrand(v, OUT_BRAND) ? 'OUT' : 'a step handle'}; dependencies and the output path bear identity, so put them in inputs.`);
    }
    // Too deep: canonicalize() below refuses it, naming the path.
    if ((!Array.isArray(v) && !isPlainObject(v)) || active.length >= MAX_VALUE_DEPTH) return;
    active.push(v);
    for (const [k, e] of Object.entries(v)) {
      keys.push(Array.isArray(v) ? Number(k) : k);
      walk(e);
      keys.pop();
    }
    active.pop();
  };
  walk(runtime);
  // Runtime arguments travel to workers as msgpack: plain data only, bounded depth (errors name the path).
  canonicalize(runtime, { path: 'runtime', step });
  return deepFreezeCopy(runtime);
}

/** The options `new StepSpec()` knows (`StepSpecInit`, the internal ones included: the codec and lowering pass them). */
export const STEP_SPEC_KEYS: ReadonlySet<string> = new Set([
  'name',
  'fn',
  'hashAttrs',
  'deps',
  'resources',
  'executor',
  'overrideOutputPath',
  'writesRecord',
  'fingerprintPayload',
  'ref',
  'kind',
  'inputs',
  'version',
  'fingerprint',
  'expectedFingerprint',
  'retries',
  'timeoutMs',
  'provenance',
  'source',
  'lowering',
  'index',
]);

const RESOURCE_KEYS: ReadonlySet<string> = new Set(['cpu', 'memoryGb', 'gpus', 'timeLimit', 'hints']);
const GPU_KEYS: ReadonlySet<string> = new Set(['count', 'type']);

/** The longest timer Node keeps: a longer `setTimeout` fires after 1 ms (TimeoutOverflowWarning). */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null) return false;
  const p = Object.getPrototypeOf(v) as object | null;
  return p === Object.prototype || p === null;
}

/** A deep-frozen copy of plain data (arrays and plain objects copied; other objects kept as given). */
export function deepFreezeCopy<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return Object.freeze(value.map(deepFreezeCopy)) as T;
  const proto = Object.getPrototypeOf(value) as object | null;
  if (proto !== Object.prototype && proto !== null) return value; // Map/Set/Date/bytes: encoded already; kept as given
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = deepFreezeCopy(v);
  return Object.freeze(out) as T;
}

/** Retries after failure: a non-negative safe integer. @default 0 */
export function checkRetries(name: string, value: unknown): number {
  const retries = value === undefined ? 0 : value;
  if (typeof retries !== 'number' || !Number.isSafeInteger(retries) || retries < 0) {
    throw new CairnError('CAIRN_INVALID_SPEC', `Step "${name}": retries must be a non-negative integer, got ${describeValue(value)}.`, { step: name });
  }
  return retries;
}

/** A per-attempt timeout: positive milliseconds up to {@link MAX_TIMEOUT_MS} (Node fires longer timers at once). */
export function checkTimeout(name: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !(value > 0) || value > MAX_TIMEOUT_MS) {
    throw new CairnError(
      'CAIRN_INVALID_SPEC',
      `Step "${name}": timeoutMs must be a positive number of milliseconds up to ${MAX_TIMEOUT_MS} (about 24.8 days), got ${describeValue(value)}; leave it out for no timeout.`,
      { step: name },
    );
  }
  return value;
}

/** Checks declared resources (known keys, non-negative numbers, whole GPUs, plain-data hints); returns a deep-frozen copy. */
export function checkResources(name: string, r: unknown): Resources | undefined {
  if (r === undefined) return undefined;
  const bad = (what: string): never => {
    throw new CairnError('CAIRN_INVALID_SPEC', `Step "${name}": invalid resources: ${what}.`, { step: name });
  };
  if (!isPlainObject(r)) return bad(`expected an object like { cpu: 2, memoryGb: 8, gpus: 1 }, got ${describeValue(r)}`);
  checkKnownKeys(r, RESOURCE_KEYS, `Step "${name}": resources`, { step: name });
  const nonNeg = (k: string, v: unknown, whole = false) => {
    if (v !== undefined && (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || (whole && !Number.isInteger(v)))) {
      bad(`${k} must be a non-negative ${whole ? 'integer' : 'number'}, got ${describeValue(v)}`);
    }
  };
  nonNeg('cpu', r.cpu);
  nonNeg('memoryGb', r.memoryGb);
  nonNeg('timeLimit', r.timeLimit);
  const gpus = r.gpus;
  if (typeof gpus === 'object' && gpus !== null) {
    if (!isPlainObject(gpus)) bad(`gpus must be a count or { count, type }, got ${describeValue(gpus)}`);
    checkKnownKeys(gpus, GPU_KEYS, `Step "${name}": resources.gpus`, { step: name });
    const g = gpus as { count?: unknown; type?: unknown };
    if (g.count === undefined) bad('gpus.count is required in { count, type }');
    nonNeg('gpus.count', g.count, true);
    if (g.type !== undefined && (typeof g.type !== 'string' || g.type === '')) bad(`gpus.type must be a non-empty string such as "a100", got ${describeValue(g.type)}`);
  } else nonNeg('gpus', gpus, true);
  if (r.hints !== undefined) {
    if (!isPlainObject(r.hints)) bad(`hints must be a plain object such as { partition: "gpu" }, got ${describeValue(r.hints)}`);
    // Hints travel to remote executors as msgpack: plain data only, bounded depth.
    canonicalize(r.hints, { path: 'resources.hints', step: name });
  }
  return deepFreezeCopy(r as Resources);
}

/** An optional string field of `new StepSpec()`. */
export function optionalString(name: string, field: string, value: unknown): string | undefined {
  if (value === undefined || typeof value === 'string') return value;
  throw new CairnError('CAIRN_INVALID_SPEC', `Step "${name}": ${field} must be a string, got ${describeValue(value)}.`, { step: name });
}

/** Checks the fields of `new StepSpec(init)` that the constructor takes as given (types only). */
export function checkSpecFields(name: string, init: Record<string, unknown>): void {
  const fail = (what: string): never => {
    throw new CairnError('CAIRN_INVALID_SPEC', `Step "${name}": ${what}.`, { step: name });
  };
  for (const f of ['fingerprint', 'expectedFingerprint', 'fingerprintPayload'] as const) optionalString(name, f, init[f]);
  if (init.hashAttrs !== undefined && !isPlainObject(init.hashAttrs)) fail(`hashAttrs must be a plain object, got ${describeValue(init.hashAttrs)}`);
  if (init.writesRecord !== undefined && typeof init.writesRecord !== 'boolean') fail(`writesRecord must be true or false, got ${describeValue(init.writesRecord)}`);
  if (init.kind !== undefined && init.kind !== 'path' && init.kind !== 'apply') fail(`kind must be "path" or "apply", got ${describeValue(init.kind)}`);
  const ref = init.ref as { module?: unknown; export?: unknown } | undefined;
  if (ref !== undefined && (typeof ref !== 'object' || ref === null || typeof ref.module !== 'string' || ref.module === '' || typeof ref.export !== 'string' || ref.export === '')) {
    fail(`ref must be { module, export } with two non-empty strings, got ${describeValue(ref)}`);
  }
  if (init.provenance !== undefined && (typeof init.provenance !== 'object' || init.provenance === null)) fail(`provenance must be an object, got ${describeValue(init.provenance)}`);
}
