import { canonicalize } from './canonical.js';
import { ARTIFACT_STEP_BRAND, isArtifactStep } from './brand.js';
import type { ArtifactStep } from './handle.js';
import { isOut, OUT } from './out.js';
import { TableWriter } from './pack.js';

/**
 * The fingerprint payload of an `apply` step: the canonical encoding (canonical.ts) of its
 * inputs with every dependency handle replaced by `"<dep:name@version>"` and `OUT` by
 * `"<OUT>"`. Lowering writes it straight into a byte table; nothing per step is a string.
 */

const RESERVED = new Set(['__bigint__', '__date__', '__map__', '__set__', '__bytes__', '__secret__']);
const QUOTE = 0x22, BACKSLASH = 0x5c, COMMA = 0x2c, COLON = 0x3a, AT = 0x40;
const OPEN_ARRAY = 0x5b, CLOSE_ARRAY = 0x5d, OPEN_OBJECT = 0x7b, CLOSE_OBJECT = 0x7d;
const DEP_OPEN = '"<dep:';
const DEP_CLOSE = '>"';
const OUT_TEXT = '"<OUT>"';

/** Appends `payload(handle)` to `w` as UTF-8 and closes the entry. */
export function writePayload(w: TableWriter, handle: ArtifactStep<unknown>): void {
  const start = w.pos;
  fieldsTop = 0;
  if (!writeFast(w, handle.inputs, 0)) {
    // Something the fast path does not take: the general encoder decides (and reports errors with their paths).
    w.pos = start;
    w.text(slowPayload(handle));
  }
  w.end();
}

let scratch: TableWriter | undefined;

/** The fingerprinted form of an `apply` step's inputs (dependencies by `name@version`, `OUT` by a placeholder). */
export function fingerprintPayload(handle: ArtifactStep<unknown>): string {
  const w = (scratch ??= new TableWriter());
  w.count = 0;
  w.pos = 0;
  writePayload(w, handle);
  return w.bytes.toString('utf8', 0, w.pos);
}

function slowPayload(handle: ArtifactStep<unknown>): string {
  return canonicalize(handle.inputs, {
    path: 'inputs',
    step: handle.name,
    replace: (v) => (isArtifactStep(v) ? `<dep:${v.ident}>` : isOut(v) ? '<OUT>' : undefined),
  });
}

/**
 * Appends the body of a JSON string literal for `s` (no quotes): ASCII that needs no escape
 * byte by byte, anything else through `JSON.stringify`. False when `s` is not well-formed
 * UTF-16 (the general encoder reports it).
 */
function jsonBody(w: TableWriter, s: string): boolean {
  const n = s.length;
  w.reserve(n);
  const b = w.bytes;
  let p = w.pos;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c >= 0x80 || c === QUOTE || c === BACKSLASH) {
      if (!s.isWellFormed()) return false;
      const quoted = JSON.stringify(s);
      w.text(quoted.slice(1, -1));
      return true;
    }
    b[p++] = c;
  }
  w.pos = p;
  return true;
}

function jsonString(w: TableWriter, s: string): boolean {
  w.byte(QUOTE);
  if (!jsonBody(w, s)) return false;
  w.byte(QUOTE);
  return true;
}

/** Appends an object key as a JSON string; false unless it is plain ASCII (the general encoder sorts other keys by code point). */
function jsonKey(w: TableWriter, k: string): boolean {
  const n = k.length;
  w.reserve(n + 2);
  const b = w.bytes;
  let p = w.pos;
  b[p++] = QUOTE;
  for (let i = 0; i < n; i++) {
    const c = k.charCodeAt(i);
    if (c < 0x20 || c >= 0x80 || c === QUOTE || c === BACKSLASH) return false;
    b[p++] = c;
  }
  b[p++] = QUOTE;
  w.pos = p;
  return true;
}

const objectProto = Object.prototype;

/**
 * The keys and values of the objects being written, a stack (an object's fields above its
 * parent's), read by `for…in` and sorted in place: no key array per object, and no keyed load
 * per field outside the loop that enumerates it (bench row "lower() 1M layered").
 */
const FIELD_KEYS: string[] = [];
const FIELD_VALUES: unknown[] = [];
let fieldsTop = 0;
/** Objects with more keys are sorted by `Array.prototype.sort` (insertion sort is quadratic). */
const SMALL_OBJECT = 16;

/** True when `Object.prototype` has an enumerable key (then `for…in` would see more than own keys). */
function objectProtoEnumerable(): boolean {
  for (const _ in objectProto) return true;
  return false;
}

/**
 * The canonical encoding for the common case (plain objects with ASCII keys and arrays of
 * strings, finite numbers, booleans, null, handles and `OUT`), byte-identical to
 * `canonicalize`. Returns false on anything else (and beyond a small depth, which also
 * covers cycles); the caller rewinds and uses the general encoder.
 */
function writeFast(w: TableWriter, v: unknown, depth: number): boolean {
  const r = writeScalar(w, v);
  return r > 0 || (r === 0 && writeObject(w, v as object | null, depth));
}

/**
 * Writes `v` when it is a string, a number or a boolean (1); 0 for an object or null (nothing
 * written); -1 when the fast path refuses it. Not recursive, so it is inlined into the loops
 * over arrays and fields (bench row "lower() 1M layered").
 */
function writeScalar(w: TableWriter, v: unknown): number {
  // `typeof` compared with constants, not switched on: V8 then tests the type in place of calling its Typeof builtin.
  if (typeof v === 'object') return 0;
  if (typeof v === 'string') return jsonString(w, v) ? 1 : -1;
  if (typeof v === 'number') {
    if (Number.isSafeInteger(v)) writeInt(w, v);
    else if (Number.isFinite(v)) w.text(String(v)); // equals JSON.stringify for finite numbers
    else return -1;
    return 1;
  }
  if (typeof v === 'boolean') {
    w.ascii(v ? 'true' : 'false');
    return 1;
  }
  return -1;
}

/** {@link writeFast} for an object or null. */
function writeObject(w: TableWriter, v: object | null, depth: number): boolean {
  if (v === null) {
    w.ascii('null');
    return true;
  }
  if (depth > 16) return false;
  if (Array.isArray(v)) return writeArray(w, v, depth);
  const proto = Object.getPrototypeOf(v) as object | null;
  if (proto === objectProto || proto === null) return !isArtifactStep(v) && writeRecord(w, v as Record<string, unknown>, proto, depth);
  // A handle (of any copy of this package: the same fields, the same text), by the brand on its prototype.
  if ((proto as Record<symbol, unknown>)[ARTIFACT_STEP_BRAND] === true) return writeDep(w, v as ArtifactStep<unknown>);
  if (v === OUT) {
    w.ascii(OUT_TEXT);
    return true;
  }
  // OUT from another copy of this package, and everything else: the general encoder.
  return false;
}

function writeArray(w: TableWriter, v: readonly unknown[], depth: number): boolean {
  w.byte(OPEN_ARRAY);
  for (let i = 0; i < v.length; i++) {
    if (i > 0) w.byte(COMMA);
    const e: unknown = v[i];
    if (e === undefined) {
      if (!(i in v)) return false; // a hole: the general encoder refuses it
      w.ascii('null');
      continue;
    }
    const r = writeScalar(w, e);
    if (r < 0 || (r === 0 && !writeObject(w, e as object | null, depth + 1))) return false;
  }
  w.byte(CLOSE_ARRAY);
  return true;
}

/** A plain object: its fields sorted by key, `undefined` ones left out. */
function writeRecord(w: TableWriter, v: Record<string, unknown>, proto: object | null, depth: number): boolean {
  // `for…in` sees own keys only while Object.prototype has no enumerable key (a null prototype has none).
  if (proto !== null && objectProtoEnumerable()) return false;
  const keys = FIELD_KEYS, values = FIELD_VALUES;
  const base = fieldsTop;
  let top = base;
  for (const k in v) {
    keys[top] = k;
    values[top++] = v[k];
  }
  if (top - base <= SMALL_OBJECT) sortFields(keys, values, base, top);
  else sortLarge(keys, values, base, top);
  fieldsTop = top;
  w.byte(OPEN_OBJECT);
  let first = true;
  for (let i = base; i < top; i++) {
    const k = keys[i] as string;
    const e = values[i];
    values[i] = undefined; // the stack keeps no input alive after lowering
    if (e === undefined) continue;
    if (k.charCodeAt(0) === 0x5f && RESERVED.has(k)) return false;
    if (!first) w.byte(COMMA);
    first = false;
    if (!jsonKey(w, k)) return false;
    w.byte(COLON);
    const r = writeScalar(w, e);
    if (r < 0 || (r === 0 && !writeObject(w, e as object | null, depth + 1))) return false;
  }
  fieldsTop = base;
  w.byte(CLOSE_OBJECT);
  return true;
}

/** Appends `"<dep:name@version>"` for handle `h`: plain ASCII in one pass, anything else by {@link jsonBody}. */
function writeDep(w: TableWriter, h: ArtifactStep<unknown>): boolean {
  const name = h.name, version = h.version;
  const n = name.length, m = version.length;
  w.reserve(n + m + 9);
  const b = w.bytes;
  let p = w.pos;
  b[p] = QUOTE;
  b[p + 1] = 0x3c; // <
  b[p + 2] = 0x64; // d
  b[p + 3] = 0x65; // e
  b[p + 4] = 0x70; // p
  b[p + 5] = COLON;
  p += 6;
  for (let i = 0; i < n; i++) {
    const c = name.charCodeAt(i);
    if (c < 0x20 || c >= 0x80 || c === QUOTE || c === BACKSLASH) return writeDepEscaped(w, h);
    b[p++] = c;
  }
  b[p++] = AT;
  for (let i = 0; i < m; i++) {
    const c = version.charCodeAt(i);
    if (c < 0x20 || c >= 0x80 || c === QUOTE || c === BACKSLASH) return writeDepEscaped(w, h);
    b[p++] = c;
  }
  b[p] = 0x3e; // >
  b[p + 1] = QUOTE;
  w.pos = p + 2;
  return true;
}

function writeDepEscaped(w: TableWriter, h: ArtifactStep<unknown>): boolean {
  w.ascii(DEP_OPEN);
  if (!jsonBody(w, h.name)) return false;
  w.byte(AT);
  if (!jsonBody(w, h.version)) return false;
  w.ascii(DEP_CLOSE);
  return true;
}

/** Appends a safe integer in decimal (what `JSON.stringify` writes for it; -0 is "0"). */
function writeInt(w: TableWriter, v: number): void {
  w.reserve(17);
  const b = w.bytes;
  let p = w.pos;
  if (v < 0) {
    b[p++] = 0x2d;
    v = -v;
  }
  let digits = 1;
  while (digits < 16 && v >= (POWERS_OF_TEN[digits] as number)) digits++;
  // 32-bit arithmetic while it fits: Math.floor on doubles cost more than the rest of the number (bench row "lower() 1M layered").
  let k = p + digits - 1;
  for (; v > 0x7fffffff; k--) {
    b[k] = 0x30 + (v % 10);
    v = Math.floor(v / 10);
  }
  for (; k >= p; k--) {
    const q = (v / 10) | 0;
    b[k] = 0x30 + v - 10 * q;
    v = q;
  }
  w.pos = p + digits;
}

/** 10^0 … 10^15 (a safe integer has at most 16 digits). */
const POWERS_OF_TEN = Array.from({ length: 16 }, (_, i) => 10 ** i);

/** Sorts fields `[from, to)` by key code unit (as `Array.prototype.sort` does for strings), values alongside. */
function sortFields(keys: string[], values: unknown[], from: number, to: number): void {
  for (let i = from + 1; i < to; i++) {
    const k = keys[i] as string;
    if ((keys[i - 1] as string) <= k) continue;
    const e = values[i];
    let j = i - 1;
    while (j >= from && (keys[j] as string) > k) {
      keys[j + 1] = keys[j] as string;
      values[j + 1] = values[j];
      j--;
    }
    keys[j + 1] = k;
    values[j + 1] = e;
  }
}

/** {@link sortFields} for many fields: by `Array.prototype.sort` on the keys, values looked up again. */
function sortLarge(keys: string[], values: unknown[], from: number, to: number): void {
  const byKey = new Map<string, unknown>();
  for (let i = from; i < to; i++) byKey.set(keys[i] as string, values[i]);
  const sorted = keys.slice(from, to).sort();
  for (let i = from; i < to; i++) {
    const k = sorted[i - from] as string;
    keys[i] = k;
    values[i] = byKey.get(k);
  }
}
