/**
 * The step hashes of a lowering session's later call: its new nodes and the nodes of earlier
 * calls they depend on, packed into two arrays for one backend call (lower.ts `hashNew` calls it).
 */
import { getBackend } from './backend.js';
import type { ArtifactStep } from './handle.js';
import { TableWriter } from './pack.js';

/** What {@link hashCall} reads and writes of a session's lowering (lower.ts `Lowering`). */
export interface SessionTables {
  readonly sources: readonly ArtifactStep<unknown>[];
  readonly offsets: Uint32Array;
  readonly edges: Uint32Array;
  readonly versionOf: Uint32Array;
  readonly fingerprints: Uint8Array;
  readonly hashes: Uint8Array;
  readonly versions: { readonly writer: TableWriter };
  /** Scratch: node `i`'s local number + 1 during one call, else 0. */
  slot: Int32Array;
}

/**
 * The packed tables of a session's call (see {@link hashCall}), reused from call to call: `bytes`
 * is written through a `TableWriter`, `words` (`loweredIdentitiesPacked`'s) grows as needed.
 */
const PACKED = new TableWriter();
let packedWords = new Uint32Array(1024);
/** {@link hashCall}'s boundary list, reused from call to call. */
const BOUNDARY: number[] = [];

/** `a`, or a zeroed copy at least `min` long (doubling), keeping its contents. */
function growI32(a: Int32Array, min: number): Int32Array {
  if (min <= a.length) return a;
  const b = new Int32Array(Math.max(2 * a.length, min, 1024));
  b.set(a);
  return b;
}

/** The `hashAttrs` extra of `h`: canonical members after `deps` (usually none: ''). */
export function extraOf(h: ArtifactStep<unknown>): string {
  return h.expectedFingerprint === undefined ? '' : `,"expectedFingerprint":${JSON.stringify(h.expectedFingerprint)}`;
}

/**
 * The step hashes of a session's nodes `[first, n)` (into `state.hashes`), from one backend
 * call of only these nodes and the nodes of earlier calls they depend on (the boundary, given
 * with their known hashes): a call's work is its new nodes, not the whole session. The tables
 * are packed into two arrays (`loweredIdentitiesPacked`), with `payloads` (one a new node) if
 * their fingerprints are not in `state.fingerprints` yet: a call per pulled handle hashes a
 * few nodes, and a second backend call, a dozen table arguments and their views cost more than
 * the hashing (bench row "stream-100k-generator").
 */
export function hashCall(state: SessionTables, first: number, payloads: TableWriter | undefined): void {
  const { sources, offsets, edges, versionOf, fingerprints, hashes } = state;
  const n = sources.length;
  const m = n - first;
  const e0 = offsets[first] as number, e1 = offsets[n] as number;
  // Local numbering: the boundary nodes first (0..b), then the new nodes (b..b+m). A node's
  // local number + 1 is kept in `state.slot` during the call (0: not numbered yet).
  const boundary = BOUNDARY;
  boundary.length = 0;
  const slot = (state.slot = growI32(state.slot, first));
  for (let q = e0; q < e1; q++) {
    const d = edges[q] as number;
    if (d < first && slot[d] === 0) {
      boundary.push(d);
      slot[d] = boundary.length;
    }
  }
  const b = boundary.length;
  const k = b + m;
  const e = e1 - e0;
  const p = payloads === undefined ? 0 : m;
  // words: [k, e, k, p], offsets (k + 1), deps (e), nameOffsets (k + 1), versionOf (k: one
  // version entry per node), versionOffsets (k + 1), extraOffsets (k + 1), payloadOffsets (p + 1).
  const size = 5 * k + e + p + 9;
  if (size > packedWords.length) packedWords = new Uint32Array(Math.max(2 * packedWords.length, size));
  const w = packedWords;
  w[0] = k;
  w[1] = e;
  w[2] = k;
  w[3] = p;
  const wOffsets = 4, wDeps = wOffsets + k + 1, wNames = wDeps + e, wVersionOf = wNames + k + 1, wVersions = wVersionOf + k, wExtras = wVersions + k + 1, wPayloads = wExtras + k + 1;
  for (let j = 0; j <= b; j++) w[wOffsets + j] = 0;
  for (let i = 0; i < m; i++) w[wOffsets + b + i + 1] = (offsets[first + i + 1] as number) - e0;
  for (let j = e0; j < e1; j++) {
    const d = edges[j] as number;
    w[wDeps + j - e0] = d < first ? (slot[d] as number) - 1 : b + d - first;
  }
  for (let j = 0; j < b; j++) slot[boundary[j] as number] = 0;
  const out = PACKED;
  out.clear();
  w[wNames] = 0;
  for (let j = 0; j < k; j++) {
    out.text((sources[j < b ? (boundary[j] as number) : first + j - b] as ArtifactStep<unknown>).name);
    w[wNames + j + 1] = out.pos;
  }
  let base = out.pos;
  const vw = state.versions.writer;
  w[wVersions] = 0;
  for (let j = 0; j < k; j++) {
    const id = versionOf[j < b ? (boundary[j] as number) : first + j - b] as number;
    const v0 = vw.offsets[id] as number, v1 = vw.offsets[id + 1] as number;
    out.reserve(v1 - v0);
    for (let c = v0; c < v1; c++) out.bytes[out.pos++] = vw.bytes[c] as number;
    w[wVersionOf + j] = j;
    w[wVersions + j + 1] = out.pos - base;
  }
  base = out.pos;
  w[wExtras] = 0;
  for (let j = 0; j < k; j++) {
    // A boundary node's hash is given: its attrs (extras, fingerprint) are not read.
    if (j >= b) out.text(extraOf(sources[first + j - b] as ArtifactStep<unknown>));
    w[wExtras + j + 1] = out.pos - base;
  }
  w[wPayloads] = 0;
  if (payloads !== undefined) {
    const pay = payloads.offsets;
    for (let i = 1; i <= p; i++) w[wPayloads + i] = pay[i] as number;
    out.reserve(payloads.pos);
    payloads.bytes.copy(out.bytes, out.pos, 0, payloads.pos);
    out.pos += payloads.pos;
  }
  out.reserve(32 * k);
  const bytes = out.bytes;
  // A boundary node's fingerprint is not read (its hash is given): its 16 bytes are left as they are.
  const fp = out.pos + 16 * b;
  let at = fp;
  if (payloads === undefined) for (let q = 16 * first; q < 16 * n; q++) bytes[at++] = fingerprints[q] as number;
  else at += 16 * m;
  const hs = at;
  for (let j = 0; j < b; j++) {
    const d = 16 * (boundary[j] as number);
    for (let q = 0; q < 16; q++) bytes[at++] = hashes[d + q] as number;
  }
  for (let q = 0; q < 16 * m; q++) bytes[at++] = 0;
  getBackend().loweredIdentitiesPacked(w, bytes);
  for (let q = hs + 16 * b, to = 16 * first; to < 16 * n; q++, to++) hashes[to] = bytes[q] as number;
  if (payloads !== undefined) for (let q = fp, to = 16 * first; to < 16 * n; q++, to++) fingerprints[to] = bytes[q] as number;
}
