import type { ByteTable, LoweredTables } from '../backend-types.js';
import { xxh64HexInto } from '../hash/xxh64.js';
import { checkGraph, checkTable, graphInputError } from './csr.js';
import { fingerprintAll } from './fingerprint-all.js';

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const DEPS_OPEN = enc('{"deps":[');
const FP_KEY = enc(',"fingerprint":"');
const VERSION_KEY = enc('","version":');
const QUOTE = 0x22, BACKSLASH = 0x5c, AT = 0x40, COMMA = 0x2c, CLOSE_ARRAY = 0x5d, CLOSE_OBJECT = 0x7d;
const HEX = enc('0123456789abcdef');
/** JSON short escapes for bytes below 0x20 (0 = use \u00xx). */
const SHORT = new Uint8Array(32);
SHORT[0x08] = 0x62; SHORT[0x09] = 0x74; SHORT[0x0a] = 0x6e; SHORT[0x0c] = 0x66; SHORT[0x0d] = 0x72;

/** The TypeScript twin of the native `duplicateSteps` (see `CoreBackend.duplicateSteps`). */
export function duplicateSteps(names: ByteTable, versionOf: Uint32Array): Uint32Array {
  const n = names.offsets instanceof Uint32Array ? Math.max(names.offsets.length - 1, 0) : 0;
  checkTable(names, n, 'nameOffsets', 'names');
  if (!(versionOf instanceof Uint32Array)) throw graphInputError('versionOf must be a Uint32Array');
  if (versionOf.length !== n) throw graphInputError(`versionOf must have n = ${n} entries (n from nameOffsets), got ${versionOf.length}`);
  const first = new Map<string, number>();
  const pairs: number[] = [];
  const { offsets, bytes } = names;
  for (let i = 0; i < n; i++) {
    // latin1 maps bytes one to one, so equal keys mean equal name bytes.
    const key = `${versionOf[i]}:${Buffer.from(bytes.buffer, bytes.byteOffset + offsets[i]!, offsets[i + 1]! - offsets[i]!).toString('latin1')}`;
    const j = first.get(key);
    if (j === undefined) first.set(key, i);
    else pairs.push(i, j);
  }
  return Uint32Array.from(pairs);
}

/** XXH64 of every entry of `table` as 16 hex digits into `out` from byte `at` (the native `xxh64HexMany`). */
export function xxh64HexMany(table: ByteTable, out: Uint8Array, at: number): void {
  const m = table.offsets instanceof Uint32Array ? Math.max(table.offsets.length - 1, 0) : 0;
  checkTable(table, m, 'offsets', 'bytes');
  if (!(out instanceof Uint8Array)) throw graphInputError('out must be a Uint8Array');
  if (!Number.isInteger(at) || at < 0) throw graphInputError(`at must be a non-negative integer, got ${String(at)}`);
  if (at + 16 * m > out.length) throw graphInputError(`out has ${out.length} bytes; ${m} entries need ${16 * m} from byte ${at}`);
  const { offsets, bytes } = table;
  for (let i = 0; i < m; i++) {
    const slice = bytes.subarray(offsets[i], offsets[i + 1]);
    xxh64HexInto(slice, slice.length, out, at + 16 * i);
  }
}

/**
 * The TypeScript twin of the native `loweredIdentities`: each step's `hashAttrs` text is
 * written out and the graph is hashed by {@link fingerprintAll}. Malformed input throws
 * `CAIRN_GRAPH_INPUT`.
 */
export function loweredIdentities(t: LoweredTables): Uint8Array {
  const n = checkGraph(t.graph);
  checkTable(t.names, n, 'nameOffsets', 'names');
  if (!(t.fingerprints instanceof Uint8Array) || t.fingerprints.length !== 16 * n) {
    throw graphInputError(`fingerprints must be a Uint8Array of 16 * n = ${16 * n} bytes (n from offsets)`);
  }
  checkTable(t.extras, n, 'extraOffsets', 'extras');
  const m = t.versions.offsets instanceof Uint32Array ? Math.max(t.versions.offsets.length - 1, 0) : 0;
  checkTable(t.versions, m, 'versionOffsets', 'versions');
  const { versionOf } = t;
  if (!(versionOf instanceof Uint32Array)) throw graphInputError('versionOf must be a Uint32Array');
  if (versionOf.length !== n) throw graphInputError(`versionOf must have n = ${n} entries (n from offsets), got ${versionOf.length}`);
  for (let i = 0; i < n; i++) if (versionOf[i]! >= m) throw graphInputError(`versionOf[${i}] = ${versionOf[i]} is out of range for ${m} versions`);
  const { offsets, deps } = t.graph;
  for (let i = 0; i < n; i++) {
    for (let k = offsets[i]!; k < offsets[i + 1]!; k++) {
      if (deps[k]! >= i) throw graphInputError(`node ${i} depends on node ${deps[k]}: lowered steps must be numbered dependencies first`);
    }
  }

  const { fingerprints } = t;

  // hashAttrs texts, then the ordinary Merkle pass.
  const attrOffsets = new Uint32Array(n + 1);
  let bytes = new Uint8Array(256 * Math.max(n, 1));
  let len = 0;
  const reserve = (extra: number): void => {
    if (len + extra <= bytes.length) return;
    const bigger = new Uint8Array(Math.max(2 * bytes.length, len + extra));
    bigger.set(bytes.subarray(0, len));
    bytes = bigger;
  };
  const put = (src: Uint8Array): void => {
    reserve(src.length);
    bytes.set(src, len);
    len += src.length;
  };
  /** Appends `src[a, b)` JSON-escaped, without quotes (input is UTF-8; only ASCII needs escapes). */
  const escaped = (src: Uint8Array, a: number, b: number): void => {
    reserve(6 * (b - a));
    for (let k = a; k < b; k++) {
      const c = src[k]!;
      if (c === QUOTE || c === BACKSLASH) {
        bytes[len++] = BACKSLASH;
        bytes[len++] = c;
      } else if (c < 0x20) {
        bytes[len++] = BACKSLASH;
        if (SHORT[c]) bytes[len++] = SHORT[c]!;
        else {
          bytes[len++] = 0x75; bytes[len++] = 0x30; bytes[len++] = 0x30;
          bytes[len++] = HEX[c >> 4]!; bytes[len++] = HEX[c & 0xf]!;
        }
      } else bytes[len++] = c;
    }
  };
  const { offsets: nOff, bytes: nb } = t.names;
  const { offsets: vOff, bytes: vb } = t.versions;
  const { offsets: eOff, bytes: eb } = t.extras;
  const version = (i: number): void => escaped(vb, vOff[versionOf[i]!]!, vOff[versionOf[i]! + 1]!);
  for (let i = 0; i < n; i++) {
    put(DEPS_OPEN);
    for (let k = offsets[i]!; k < offsets[i + 1]!; k++) {
      const d = deps[k]!;
      reserve(3);
      if (k > offsets[i]!) bytes[len++] = COMMA;
      bytes[len++] = QUOTE;
      escaped(nb, nOff[d]!, nOff[d + 1]!);
      reserve(1);
      bytes[len++] = AT;
      version(d);
      reserve(1);
      bytes[len++] = QUOTE;
    }
    reserve(1);
    bytes[len++] = CLOSE_ARRAY;
    put(eb.subarray(eOff[i], eOff[i + 1]));
    put(FP_KEY);
    put(fingerprints.subarray(16 * i, 16 * i + 16));
    put(VERSION_KEY);
    reserve(1);
    bytes[len++] = QUOTE;
    version(i);
    reserve(2);
    bytes[len++] = QUOTE;
    bytes[len++] = CLOSE_OBJECT;
    attrOffsets[i + 1] = len;
  }
  const result = fingerprintAll(t.graph, t.names, { offsets: attrOffsets, bytes: bytes.subarray(0, len) });
  if (!result.ok) throw graphInputError('lowered steps must be numbered dependencies first'); // unreachable after the check above
  return result.hex;
}
