import type { ByteTable, CsrGraph, FingerprintResult } from '../backend-types.js';
import { xxh64HexInto } from '../hash/xxh64.js';
import { checkGraph, checkTable, graphInputError } from './csr.js';
import { escapeJsonBytes } from './json-bytes.js';
import { toposortUnchecked } from './toposort.js';

const QUOTE = 0x22, DASH = 0x2d, COMMA = 0x2c;
const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const DEPS_OPEN = enc('{"deps":[');
const ATTRS_KEY = enc('],"hashAttrs":');
const NAME_KEY = enc(',"name":');

/** Hashes given in advance: 16 bytes per node, all zero or 16 lowercase hex digits. */
export function checkKnown(known: Uint8Array, n: number): void {
  if (!(known instanceof Uint8Array) || known.length !== 16 * n) {
    throw graphInputError(`known must have 16 * n = ${16 * n} bytes (n from offsets), got ${known instanceof Uint8Array ? known.length : typeof known}`);
  }
  for (let i = 0; i < n; i++) {
    let zero = true, hex = true;
    for (let k = 16 * i; k < 16 * i + 16; k++) {
      const c = known[k]!;
      if (c !== 0) zero = false;
      if (!((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66))) hex = false;
    }
    if (!zero && !hex) throw graphInputError(`known[${16 * i}..${16 * i + 16}] must be 16 lowercase hex digits or all zero`);
  }
}

/**
 * Every node's Merkle step hash (docs/identity.md) in one pass over a dependencies-first order.
 * Output: 16 ASCII hex digits per node, node `i` at `[16i, 16i + 16)`. A cycle is reported
 * exactly as {@link toposort} reports it. Malformed input throws `CAIRN_GRAPH_INPUT`.
 */
export function fingerprintAll(g: CsrGraph, names: ByteTable, attrs: ByteTable, known?: Uint8Array): FingerprintResult {
  const n = checkGraph(g);
  checkTable(names, n, 'nameOffsets', 'names');
  checkTable(attrs, n, 'attrOffsets', 'attrs');
  if (known !== undefined) checkKnown(known, n);
  const topo = toposortUnchecked(g, n);
  if (!topo.ok) return topo;

  const { offsets, deps } = g;
  const nOff = names.offsets, nb = names.bytes;
  const aOff = attrs.offsets, ab = attrs.bytes;
  const hex = known === undefined ? new Uint8Array(16 * n) : known.slice();
  let buf = new Uint8Array(1024);
  let len = 0;
  let sorted = new Uint32Array(64);

  const reserve = (extra: number): void => {
    if (len + extra <= buf.length) return;
    const bigger = new Uint8Array(Math.max(buf.length * 2, len + extra));
    bigger.set(buf.subarray(0, len));
    buf = bigger;
  };
  /** Appends node `i`'s name, JSON-escaped, without quotes. */
  const pushName = (i: number): void => {
    const a = nOff[i]!, b = nOff[i + 1]!;
    reserve(6 * (b - a));
    len = escapeJsonBytes(buf, len, nb, a, b);
  };
  /** Compares `name(a) + "-" + hash(a)` with the same for `b`, bytewise (= by code point). */
  const cmp = (a: number, b: number): number => {
    const a0 = nOff[a]!, la = nOff[a + 1]! - a0;
    const b0 = nOff[b]!, lb = nOff[b + 1]! - b0;
    const m = la < lb ? la : lb;
    for (let k = 0; k < m; k++) {
      const d = nb[a0 + k]! - nb[b0 + k]!;
      if (d !== 0) return d;
    }
    const total = m + 17 + Math.abs(la - lb);
    for (let p = m; p < total; p++) {
      const x = p < la ? nb[a0 + p]! : p === la ? DASH : p - la - 1 < 16 ? hex[16 * a + p - la - 1]! : -1;
      const y = p < lb ? nb[b0 + p]! : p === lb ? DASH : p - lb - 1 < 16 ? hex[16 * b + p - lb - 1]! : -1;
      if (x !== y) return x - y;
    }
    return 0;
  };

  const order = topo.order;
  for (let oi = 0; oi < n; oi++) {
    const u = order[oi]!;
    if (hex[16 * u] !== 0) continue; // given in `known`
    const d0 = offsets[u]!, dn = offsets[u + 1]! - d0;
    if (dn <= 64) {
      // insertion sort: dependency lists are usually short
      for (let k = 0; k < dn; k++) {
        const v = deps[d0 + k]!;
        let j = k;
        while (j > 0 && cmp(sorted[j - 1]!, v) > 0) {
          sorted[j] = sorted[j - 1]!;
          j--;
        }
        sorted[j] = v;
      }
    } else {
      if (dn > sorted.length) sorted = new Uint32Array(2 * dn);
      sorted.set(Array.from(deps.subarray(d0, d0 + dn)).sort(cmp));
    }

    len = 0;
    reserve(DEPS_OPEN.length);
    buf.set(DEPS_OPEN, 0);
    len = DEPS_OPEN.length;
    for (let k = 0; k < dn; k++) {
      const d = sorted[k]!;
      reserve(20);
      if (k > 0) buf[len++] = COMMA;
      buf[len++] = QUOTE;
      pushName(d);
      reserve(18);
      buf[len++] = DASH;
      buf.set(hex.subarray(16 * d, 16 * d + 16), len);
      len += 16;
      buf[len++] = QUOTE;
    }
    const a0 = aOff[u]!, a1 = aOff[u + 1]!;
    reserve(ATTRS_KEY.length + (a1 - a0) + NAME_KEY.length + 2);
    buf.set(ATTRS_KEY, len);
    len += ATTRS_KEY.length;
    buf.set(ab.subarray(a0, a1), len);
    len += a1 - a0;
    buf.set(NAME_KEY, len);
    len += NAME_KEY.length;
    buf[len++] = QUOTE;
    pushName(u);
    reserve(2);
    buf[len++] = QUOTE;
    buf[len++] = 0x7d; // }
    xxh64HexInto(buf, len, hex, 16 * u);
  }
  return { ok: true, hex };
}
