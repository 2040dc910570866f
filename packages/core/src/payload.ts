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
 * The canonical encoding for the common case (plain objects with ASCII keys and arrays of
 * strings, finite numbers, booleans, null, handles and `OUT`), byte-identical to
 * `canonicalize`. Returns false on anything else (and beyond a small depth, which also
 * covers cycles); the caller rewinds and uses the general encoder.
 */
function writeFast(w: TableWriter, v: unknown, depth: number): boolean {
  switch (typeof v) {
    case 'string':
      return jsonString(w, v);
    case 'number':
      if (Number.isSafeInteger(v)) writeInt(w, v);
      else if (Number.isFinite(v)) w.text(String(v)); // equals JSON.stringify for finite numbers
      else return false;
      return true;
    case 'boolean':
      w.text(v ? 'true' : 'false');
      return true;
    case 'object':
      break;
    default:
      return false;
  }
  if (v === null) {
    w.text('null');
    return true;
  }
  if (depth > 16) return false;
  if (Array.isArray(v)) {
    w.byte(OPEN_ARRAY);
    for (let i = 0; i < v.length; i++) {
      if (i > 0) w.byte(COMMA);
      const e: unknown = v[i];
      if (e === undefined) {
        if (!(i in v)) return false; // a hole: the general encoder refuses it
        w.text('null');
      }
      else if (!writeFast(w, e, depth + 1)) return false;
    }
    w.byte(CLOSE_ARRAY);
    return true;
  }
  const proto = Object.getPrototypeOf(v) as object | null;
  // A handle (of any copy of this package: the same fields, the same text), by the brand on its prototype.
  if (proto !== objectProto && proto !== null && (proto as Record<symbol, unknown>)[ARTIFACT_STEP_BRAND] === true) {
    const h = v as ArtifactStep<unknown>;
    w.text(DEP_OPEN);
    if (!jsonBody(w, h.name)) return false;
    w.byte(AT);
    if (!jsonBody(w, h.version)) return false;
    w.text(DEP_CLOSE);
    return true;
  }
  if (v === OUT) {
    w.text(OUT_TEXT);
    return true;
  }
  // OUT from another copy of this package, and everything else: the general encoder.
  if ((proto !== objectProto && proto !== null) || isArtifactStep(v)) return false;
  const keys = Object.keys(v);
  let sorted = true;
  for (let i = 1; i < keys.length; i++) {
    if ((keys[i - 1] as string) > (keys[i] as string)) {
      sorted = false;
      break;
    }
  }
  if (!sorted) sortSmall(keys);
  w.byte(OPEN_OBJECT);
  let first = true;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i] as string;
    const e = (v as Record<string, unknown>)[k];
    if (e === undefined) continue;
    if (k.charCodeAt(0) === 0x5f && RESERVED.has(k)) return false;
    if (!first) w.byte(COMMA);
    first = false;
    if (!jsonKey(w, k)) return false;
    w.byte(COLON);
    if (!writeFast(w, e, depth + 1)) return false;
  }
  w.byte(CLOSE_OBJECT);
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
  for (let x = v; x >= 10; x = Math.floor(x / 10)) digits++;
  for (let k = p + digits - 1; k >= p; k--) {
    b[k] = 0x30 + (v % 10);
    v = Math.floor(v / 10);
  }
  w.pos = p + digits;
}

/** Sorts strings by code unit (as `Array.prototype.sort` does); insertion sort beats it on a few keys. */
function sortSmall(keys: string[]): void {
  if (keys.length > 8) {
    keys.sort();
    return;
  }
  for (let i = 1; i < keys.length; i++) {
    const k = keys[i] as string;
    let j = i - 1;
    while (j >= 0 && (keys[j] as string) > k) {
      keys[j + 1] = keys[j] as string;
      j--;
    }
    keys[j + 1] = k;
  }
}
