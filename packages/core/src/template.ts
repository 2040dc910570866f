/**
 * The inputs template of an `apply` step: its inputs with each dependency handle replaced by a
 * slot (`DepSlot`, an index into the step's dependencies) and `OUT` kept as the sentinel. It is
 * what travels to workers; `resolveTemplate` turns it back into the values a run passes the
 * step function (each slot becomes the dependency's output path, `OUT` the step's own).
 */
import { brand, DEP_SLOT_BRAND, hasBrand, isArtifactStep } from './brand.js';
import { CairnError } from './errors.js';
import type { ArtifactStep } from './handle.js';
import { isOut, OUT } from './out.js';
import { MAX_VALUE_DEPTH, tooDeep } from './limits.js';
import { isSecret, SECRET_TAG } from './secret.js';
import type { StepSpec } from './spec.js';

/** A dependency's place in an `apply` step's inputs template: `deps[index]`. */
export class DepSlot {
  /** Index into the step's `deps`. */
  readonly index: number;
  constructor(index: number) {
    this.index = index;
    Object.freeze(this);
  }

  /** A shared slot for `index` (slots are immutable, so lowering reuses them). */
  static of(index: number): DepSlot {
    let slot = slotCache[index];
    if (slot === undefined) {
      slot = new DepSlot(index);
      if (index < 1024) slotCache[index] = slot;
    }
    return slot;
  }
}

brand(DepSlot.prototype, DEP_SLOT_BRAND);

const slotCache: DepSlot[] = [];

function isPlain(v: object): boolean {
  const p = Object.getPrototypeOf(v) as object | null;
  return p === Object.prototype || p === null;
}

/**
 * Sets `key` as an own data property: a `__proto__` key of the inputs (JSON.parse makes one) is
 * data like any other, and `out[key] = v` would set the object's prototype instead (the step saw
 * it inherited in-process and lost it on threads and process).
 */
function setOwn(out: Record<string, unknown>, key: string, v: unknown): void {
  if (key === '__proto__') Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
  else out[key] = v;
}

/** The inputs template of `value` (inputs checked by `apply()`: plain data, bounded depth). */
export function toTemplate(value: unknown, deps: readonly ArtifactStep<unknown>[]): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (isArtifactStep(value)) return DepSlot.of(deps.indexOf(value));
  if (isOut(value)) return OUT;
  // Workers get a secret's tagged form (plain data that survives msgpack and structured clone); revealSecrets fills it in at call time.
  if (isSecret(value)) return { [SECRET_TAG]: value.name };
  if (Array.isArray(value)) return value.map((v) => toTemplate(v, deps));
  if (isPlain(value)) {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value)) setOwn(out, k, toTemplate((value as Record<string, unknown>)[k], deps));
    return out;
  }
  return value;
}

/**
 * Resolves an inputs template: dependency slot `i` becomes `depPaths[depKeys[i]]`, `OUT`
 * becomes `outputPath`. Arrays and plain objects are copied; other values kept as-is.
 */
export function resolveTemplate(
  template: unknown,
  depKeys: readonly string[],
  outputPath: string,
  depPaths: Readonly<Record<string, string>>,
  step: string,
): unknown {
  // Templates come from validated inputs, but a decoded task is bytes from elsewhere: the depth is bounded.
  const keys: (string | number)[] = [];
  const walk = (v: unknown): unknown => {
    if (typeof v !== 'object' || v === null) return v;
    if (hasBrand(v, DEP_SLOT_BRAND)) {
      const key = depKeys[(v as DepSlot).index];
      const path = key === undefined ? undefined : depPaths[key];
      if (path === undefined) {
        throw new CairnError('CAIRN_INVALID_SPEC', `Step "${step}": no output path for dependency #${(v as DepSlot).index}; the runner must pass every dependency's path.`, { step });
      }
      return path;
    }
    if (isOut(v)) return outputPath;
    const isArray = Array.isArray(v);
    if (!isArray && !isPlain(v)) return v;
    if (keys.length >= MAX_VALUE_DEPTH) throw tooDeep(step, 'inputs', keys);
    if (isArray) {
      const out = new Array<unknown>(v.length);
      for (let i = 0; i < v.length; i++) {
        keys.push(i);
        out[i] = walk(v[i]);
        keys.pop();
      }
      return out;
    }
    const out: Record<string, unknown> = {};
    for (const [k, e] of Object.entries(v)) {
      keys.push(k);
      setOwn(out, k, walk(e));
      keys.pop();
    }
    return out;
  };
  return walk(template);
}

/** Resolves an `apply` step's inputs for a run (see {@link resolveTemplate}). */
export function resolveInputs(spec: StepSpec, outputPath: string, depPaths: Readonly<Record<string, string>>): unknown {
  return resolveTemplate(spec.inputs, spec.deps.map((d) => d.nameWithHash), outputPath, depPaths, spec.name);
}
