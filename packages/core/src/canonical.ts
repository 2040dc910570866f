import { CairnError } from './errors.js';
import { formatKeyPath, MAX_VALUE_DEPTH, tooDeep } from './limits.js';
import { isSecret } from './secret.js';

/**
 * Canonical encoding ("cairn-canon/1"): a deterministic JSON text for a value, used for
 * every hash in Cairn. The full table of how each type encodes is in docs/identity.md.
 * Values that cannot be encoded deterministically are refused with an error naming the
 * path of the bad value, e.g. `inputs.optimizer.schedule[2]`.
 */

const RESERVED_KEYS = new Set(['__bigint__', '__date__', '__map__', '__set__', '__bytes__', '__secret__']);

/** Options for {@link canonicalize}. */
export interface CanonicalOptions {
  /** The root's name in error paths. @default "value" */
  path?: string;
  /** The step the value belongs to, for error messages. */
  step?: string;
  /**
   * Replaces special objects before encoding (lowering uses it for dependency handles and `OUT`).
   * Return `undefined` to encode the value normally.
   */
  replace?: (value: object) => unknown;
}

/**
 * Compares two strings by Unicode code point (the order of their UTF-8 bytes).
 * Equals JavaScript's default order except where surrogate pairs meet U+E000–U+FFFF.
 */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) {
      if (x >= 0xd800 && y >= 0xd800) {
        const xs = x <= 0xdfff;
        const ys = y <= 0xdfff;
        if (xs !== ys) return xs ? 1 : -1;
      }
      return x - y;
    }
  }
  return a.length - b.length;
}

/** JSON string literal exactly as `JSON.stringify` writes it (the identity spec's `jsonString`). */
export function jsonString(s: string): string {
  return JSON.stringify(s);
}

function describe(value: unknown): string {
  if (typeof value === 'function') return `a function${value.name ? ` (${value.name})` : ''}`;
  if (typeof value === 'symbol') return `a symbol (${String(value.description)})`;
  if (typeof value === 'number') return String(value);
  if (typeof value === 'object' && value !== null) {
    const ctor = (value as { constructor?: { name?: string } }).constructor?.name;
    return `an instance of ${ctor ?? 'an unknown class'}`;
  }
  return typeof value;
}

/** The path of the value being encoded: the root's name, then keys (a stack, formatted only on error). */
type PathKeys = (string | number)[];


const HIGH = /[\uD800-\uFFFF]/;

/** Sorts object keys by code point; JavaScript's default sort agrees unless a key holds U+D800 or above. */
function sortKeys(keys: string[]): string[] {
  keys.sort();
  for (const k of keys) if (HIGH.test(k)) return keys.sort(compareCodePoints);
  return keys;
}

function refuse(opts: CanonicalOptions, keys: PathKeys, value: unknown, fix: string, what = describe(value)): never {
  const where = opts.step ? `Step "${opts.step}": ` : '';
  throw new CairnError(
    'CAIRN_CANONICAL_VALUE',
    `${where}cannot encode ${what} at ${formatKeyPath(opts.path ?? 'value', keys)}: ${fix}`,
    { step: opts.step },
  );
}

function base64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

/**
 * Encodes `value` canonically. Throws `CAIRN_CANONICAL_VALUE` for values that have no
 * deterministic encoding (functions, symbols, NaN/Infinity, class instances without
 * `toJSON`, typed arrays other than Uint8Array, lone surrogates, cycles, sparse arrays), and
 * `CAIRN_TOO_DEEP` for a value nested deeper than `MAX_VALUE_DEPTH`.
 */
export function canonicalize(value: unknown, options: CanonicalOptions = {}): string {
  // Objects on the current path (cycle check); a small array beats a Set for shallow values.
  const active: object[] = [];
  const path: PathKeys = [];
  const enc = (v: unknown): string => {
    switch (typeof v) {
      case 'string':
        if (!v.isWellFormed()) refuse(options, path, v, 'the string holds a lone surrogate; fix the text encoding.');
        return JSON.stringify(v);
      case 'number':
        if (!Number.isFinite(v)) refuse(options, path, v, 'NaN and Infinity have no canonical form; use null or a string.');
        return JSON.stringify(v);
      case 'boolean':
        return v ? 'true' : 'false';
      case 'undefined':
        return 'null';
      case 'bigint':
        return `{"__bigint__":"${v.toString()}"}`;
      case 'function':
        refuse(options, path, v, 'functions have no canonical form; pass data, or reference code with defineStep().');
      // eslint-disable-next-line no-fallthrough
      case 'symbol':
        refuse(options, path, v, 'symbols have no canonical form; use a string.');
    }
    if (v === null) return 'null';
    const obj = v as object;
    if (options.replace) {
      const r = options.replace(obj);
      if (r !== undefined) return enc(r);
    }
    if (active.includes(obj)) refuse(options, path, v, 'the value contains a cycle (it refers to itself); break the cycle.');
    if (active.length >= MAX_VALUE_DEPTH) throw tooDeep(options.step, options.path ?? 'value', path);
    active.push(obj);
    try {
      if (Array.isArray(obj)) {
        let out = '[';
        for (let i = 0; i < obj.length; i++) {
          if (i > 0) out += ',';
          path.push(i);
          const item: unknown = obj[i];
          // A hole reads as undefined, like an explicit undefined, but does not survive msgpack or
          // structured clone the same way: refused rather than silently made null.
          if (item === undefined && !(i in obj)) refuse(options, path, item, 'the array is sparse; fill the hole with null or remove it.', 'a hole');
          out += enc(item);
          path.pop();
        }
        return out + ']';
      }
      const proto = Object.getPrototypeOf(obj) as object | null;
      if (proto === Object.prototype || proto === null) {
        const rec = obj as Record<string, unknown>;
        const keys = sortKeys(Object.keys(rec));
        let out = '{';
        let first = true;
        for (const k of keys) {
          const item = rec[k];
          if (item === undefined) continue;
          path.push(k);
          if (RESERVED_KEYS.has(k)) refuse(options, path, v, `the key "${k}" is reserved for tagged values; rename it.`);
          if (!k.isWellFormed()) refuse(options, path, k, 'an object key holds a lone surrogate; fix the text encoding.');
          out += `${first ? '' : ','}${JSON.stringify(k)}:${enc(item)}`;
          path.pop();
          first = false;
        }
        return out + '}';
      }
      // A secret is identified by its name only; its value is never known here.
      if (isSecret(obj)) return `{"__secret__":${JSON.stringify(obj.name)}}`;
      if (obj instanceof Date) {
        if (Number.isNaN(obj.getTime())) refuse(options, path, v, 'the Date is invalid.');
        return `{"__date__":"${obj.toISOString()}"}`;
      }
      if (obj instanceof Uint8Array) return `{"__bytes__":"${base64(obj)}"}`;
      if (ArrayBuffer.isView(obj) || obj instanceof ArrayBuffer) {
        refuse(options, path, v, 'only Uint8Array is encoded; convert other binary data with new Uint8Array(x.buffer) or Array.from(x).');
      }
      if (obj instanceof Map) {
        const entries = [...obj.entries()].map(([k, val], i) => {
          path.push(`<key ${i}>`);
          const ek = enc(k);
          path[path.length - 1] = `.get(${i})`;
          const ev = enc(val);
          path.pop();
          return [ek, ev] as const;
        });
        entries.sort((a, b) => compareCodePoints(a[0], b[0]));
        return `{"__map__":[${entries.map(([k, val]) => `[${k},${val}]`).join(',')}]}`;
      }
      if (obj instanceof Set) {
        let i = 0;
        const items = [...obj].map((e) => {
          path.push(`<item ${i++}>`);
          const item = enc(e);
          path.pop();
          return item;
        });
        items.sort(compareCodePoints);
        return `{"__set__":[${items.join(',')}]}`;
      }
      const toJSON = (obj as { toJSON?: unknown }).toJSON;
      if (typeof toJSON === 'function') return enc((toJSON as () => unknown).call(obj));
      return refuse(options, path, v, 'class instances are refused unless they define toJSON(); pass plain data or add toJSON().');
    } finally {
      active.pop();
    }
  };
  return enc(value);
}
