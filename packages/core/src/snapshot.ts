/**
 * The copy of a step's inputs that `apply()` keeps, so changing the object given as `inputs`
 * afterwards cannot change the step: before, a handle added to it later was an input that the
 * step's dependencies (found at `apply()`) did not list — a hidden edge, even a cycle `lower()`
 * never saw — and the step failed at run time with "no output path for dependency #-1".
 */
import { MAX_VALUE_DEPTH } from './limits.js';

/**
 * A frozen copy of the arrays and plain objects (prototype `Object.prototype` or null) in
 * `inputs` (a step receives copies of its inputs, never these); everything else (handles, `OUT`, Dates, Maps, class instances) is kept as it is. Holes, a key
 * named `__proto__` (kept as data) and references back to an enclosing container (copied as the
 * same loop: canonical encoding reports it with its path) survive. Changing the copy
 * (`handle.inputs.x = …`) throws a TypeError: the handle's inputs are fixed at `apply()`. Containers nested deeper than
 * `MAX_VALUE_DEPTH` are kept uncopied: the dependency walk refuses them (`CAIRN_TOO_DEEP`).
 * Whether anything kept uncopied can change is reported as `sealed`.
 */
export function snapshotInputs<T>(inputs: T, isFixed: (v: object) => boolean): Snapshot<T> {
  const copies = new Map<object, object>();
  let sealed = true;
  const copy = (v: unknown, depth: number): unknown => {
    if (typeof v !== 'object' || v === null) return v;
    const done = copies.get(v);
    if (done !== undefined) return done;
    if (depth > MAX_VALUE_DEPTH) {
      sealed = false;
      return v;
    }
    const proto = Object.getPrototypeOf(v) as object | null;
    if (Array.isArray(v) && proto === Array.prototype) {
      const out = new Array<unknown>(v.length);
      copies.set(v, out);
      for (let i = 0; i < v.length; i++) if (i in v) out[i] = copy(v[i], depth + 1);
      copies.delete(v);
      return Object.freeze(out);
    }
    if (proto !== Object.prototype && proto !== null) {
      if (!isFixed(v)) sealed = false;
      return v;
    }
    const out = Object.create(proto) as Record<string, unknown>;
    copies.set(v, out);
    for (const k in v) {
      const value = copy((v as Record<string, unknown>)[k], depth + 1);
      if (k === '__proto__') Object.defineProperty(out, k, { value, enumerable: true, writable: true, configurable: true });
      else out[k] = value;
    }
    copies.delete(v);
    return Object.freeze(out);
  };
  const value = copy(inputs, 0) as T;
  return { value, sealed };
}

/** What {@link snapshotInputs} made. */
export interface Snapshot<T> {
  /** The copy. */
  readonly value: T;
  /**
   * True when the copy holds nothing that can change: frozen copies, primitives and objects
   * `isFixed` accepts (handles, `OUT`). A Date, Map, typed array or class instance kept as it is
   * makes it false.
   */
  readonly sealed: boolean;
}
