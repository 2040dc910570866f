import type { ByteTable, LoweredTables } from '../backend-types.js';
import { xxh64HexInto } from '../hash/xxh64.js';
import { checkGraph, checkTable, graphInputError } from './csr.js';
import { TableWriter } from '../pack.js';
import { checkKnown, fingerprintAll } from './fingerprint-all.js';
import { escapeJsonBytes } from './json-bytes.js';

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const DEPS_OPEN = enc('{"deps":[');
const FP_KEY = enc(',"fingerprint":"');
const VERSION_KEY = enc('","version":');
const QUOTE = 0x22, AT = 0x40, COMMA = 0x2c, CLOSE_ARRAY = 0x5d, CLOSE_OBJECT = 0x7d;

const ATTRS = new TableWriter();

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
export function loweredIdentities(t: LoweredTables, out?: Uint8Array): Uint8Array {
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

  // hashAttrs texts, then the ordinary Merkle pass. One writer serves every call: a lowering
  // session calls once per pulled handle, and a fresh 64 KiB writer each time cost more than the
  // hashing (bench row "apply handles of one graph: generator vs array", TS fallback).
  const attrs = ATTRS;
  attrs.clear();
  const put = (src: Uint8Array): void => {
    attrs.reserve(src.length);
    attrs.bytes.set(src, attrs.pos);
    attrs.pos += src.length;
  };
  const escaped = (src: Uint8Array, a: number, b: number): void => {
    attrs.reserve(6 * (b - a));
    attrs.pos = escapeJsonBytes(attrs.bytes, attrs.pos, src, a, b);
  };
  const { offsets: nOff, bytes: nb } = t.names;
  const { offsets: vOff, bytes: vb } = t.versions;
  const { offsets: eOff, bytes: eb } = t.extras;
  const version = (i: number): void => escaped(vb, vOff[versionOf[i]!]!, vOff[versionOf[i]! + 1]!);
  const { known } = t;
  if (known !== undefined) checkKnown(known, n);
  if (out !== undefined && (!(out instanceof Uint8Array) || out.length !== 16 * n)) throw graphInputError(`out must be a Uint8Array of 16 * n = ${16 * n} bytes (n from offsets)`);
  for (let i = 0; i < n; i++) {
    if (known !== undefined && known[16 * i] !== 0) {
      attrs.end(); // not read: the node's hash is given
      continue;
    }
    put(DEPS_OPEN);
    for (let k = offsets[i]!; k < offsets[i + 1]!; k++) {
      const d = deps[k]!;
      if (k > offsets[i]!) attrs.byte(COMMA);
      attrs.byte(QUOTE);
      escaped(nb, nOff[d]!, nOff[d + 1]!);
      attrs.byte(AT);
      version(d);
      attrs.byte(QUOTE);
    }
    attrs.byte(CLOSE_ARRAY);
    put(eb.subarray(eOff[i], eOff[i + 1]));
    put(FP_KEY);
    put(fingerprints.subarray(16 * i, 16 * i + 16));
    put(VERSION_KEY);
    attrs.byte(QUOTE);
    version(i);
    attrs.byte(QUOTE);
    attrs.byte(CLOSE_OBJECT);
    attrs.end();
  }
  const result = fingerprintAll(t.graph, t.names, attrs.table(), known);
  if (!result.ok) throw graphInputError('lowered steps must be numbered dependencies first'); // unreachable after the check above
  if (out === undefined) return result.hex;
  out.set(result.hex);
  return out;
}

/**
 * The TypeScript twin of the native `loweredIdentitiesPacked`: the packed tables are read as
 * views, the last `p` fingerprints hashed by {@link xxh64HexMany} and the identities by
 * {@link loweredIdentities}. Malformed input throws `CAIRN_GRAPH_INPUT`.
 */
export function loweredIdentitiesPacked(words: Uint32Array, bytes: Uint8Array): void {
  if (!(words instanceof Uint32Array)) throw graphInputError('words must be a Uint32Array');
  if (!(bytes instanceof Uint8Array)) throw graphInputError('bytes must be a Uint8Array');
  if (words.length < 4) throw graphInputError(`words ends at ${words.length} but the header [n, e, v, p] needs 4 words`);
  const n = words[0]!, e = words[1]!, v = words[2]!, p = words[3]!;
  if (p > n) throw graphInputError(`${p} payloads for ${n} nodes: at most one a node`);
  let at = 4;
  const take = (len: number, what: string): Uint32Array => {
    if (at + len > words.length) throw graphInputError(`words ends at ${words.length} but ${what} needs ${len} more from word ${at}`);
    return words.subarray(at, (at += len));
  };
  const offsets = take(n + 1, 'offsets');
  const deps = take(e, 'deps');
  const nameOffsets = take(n + 1, 'nameOffsets');
  const versionOf = take(n, 'versionOf');
  const versionOffsets = take(v + 1, 'versionOffsets');
  const extraOffsets = take(n + 1, 'extraOffsets');
  const payloadOffsets = take(p + 1, 'payloadOffsets');
  const need = nameOffsets[n]! + versionOffsets[v]! + extraOffsets[n]! + payloadOffsets[p]! + 32 * n;
  if (need > bytes.length) throw graphInputError(`bytes has ${bytes.length} bytes but its tables and the hashes need ${need}`);
  let pos = 0;
  const split = (len: number): Uint8Array => bytes.subarray(pos, (pos += len));
  const names = split(nameOffsets[n]!);
  const versions = split(versionOffsets[v]!);
  const extras = split(extraOffsets[n]!);
  const payloads = split(payloadOffsets[p]!);
  const fingerprints = split(16 * n);
  const hashes = split(16 * n);
  xxh64HexMany({ offsets: payloadOffsets, bytes: payloads }, fingerprints, 16 * (n - p));
  const t: LoweredTables = {
    graph: { offsets, deps },
    names: { offsets: nameOffsets, bytes: names },
    versionOf,
    versions: { offsets: versionOffsets, bytes: versions },
    fingerprints,
    extras: { offsets: extraOffsets, bytes: extras },
    known: hashes,
  };
  loweredIdentities(t, hashes);
}
