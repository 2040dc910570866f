/**
 * Whether a step's returned value can be recorded: plain JSON (null, booleans, finite numbers,
 * strings, dense arrays, plain objects), so it reads back the same from the record whether the
 * step ran now or was cached. Anything else is an error naming the step and where the bad value
 * is (`result.model.fn`), never a silent drop.
 */
import { CairnError } from './errors.js';
import { formatKeyPath, MAX_VALUE_DEPTH } from './limits.js';

function isPlain(v: object): boolean {
  const p = Object.getPrototypeOf(v) as object | null;
  return p === Object.prototype || p === null;
}

/** What is wrong at the value, or undefined when it is fine (its insides are walked by the caller). */
function problemOf(v: unknown, inArray: boolean): string | undefined {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return undefined;
    case 'number':
      return Number.isFinite(v) ? undefined : `is ${String(v)}, which JSON cannot hold`;
    case 'undefined':
      return inArray ? 'is undefined inside an array (JSON turns it into null)' : undefined;
    case 'bigint':
      return 'is a BigInt; return it as a string';
    case 'function':
      return 'is a function';
    case 'symbol':
      return 'is a symbol';
    default:
      if (v === null || Array.isArray(v)) return undefined;
      if (typeof v === 'object' && !isPlain(v)) {
        const ctor = (Object.getPrototypeOf(v) as { constructor?: { name?: string } } | null)?.constructor?.name;
        return `is ${ctor ? `a ${ctor}` : 'an object'} instance, not a plain object`;
      }
      return undefined;
  }
}

/**
 * Throws `CAIRN_UNRECORDABLE_RESULT` when `value` (what step `step` returned) is not plain JSON,
 * naming the path of the first bad value. `undefined` (no value) is fine, as are `undefined`
 * properties (left out, as JSON does).
 */
export function checkRecordable(step: string, value: unknown): void {
  const keys: (string | number)[] = [];
  const active: object[] = [];
  const fail = (why: string): never => {
    throw new CairnError(
      'CAIRN_UNRECORDABLE_RESULT',
      `Step "${step}": its return value cannot be recorded: ${formatKeyPath('result', keys)} ${why}. Return plain JSON (objects, arrays, strings, finite numbers, booleans, null), or write the rest into the output directory (an artifact kind with save, e.g. artifacts.json()).`,
      { step },
    );
  };
  const walk = (v: unknown, inArray: boolean): void => {
    const problem = problemOf(v, inArray);
    if (problem !== undefined) fail(problem);
    if (typeof v !== 'object' || v === null) return;
    if (active.includes(v)) fail('refers back to a value that contains it (a cycle)');
    if (active.length >= MAX_VALUE_DEPTH) fail(`nests deeper than ${MAX_VALUE_DEPTH} levels`);
    active.push(v);
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        keys.push(i);
        if (!(i in v)) fail('is a hole in a sparse array');
        walk(v[i], true);
        keys.pop();
      }
    } else {
      if (Object.getOwnPropertySymbols(v).length > 0) fail('has symbol keys');
      for (const k of Object.keys(v)) {
        keys.push(k);
        walk((v as Record<string, unknown>)[k], false);
        keys.pop();
      }
    }
    active.pop();
  };
  walk(value, false);
}
