import type { ByteTable, CsrGraph } from '../backend-types.js';
import { CairnError } from '../errors.js';

/** Malformed graph input; the message names the argument (same wording as the Rust module). */
export function graphInputError(message: string): CairnError {
  return new CairnError('CAIRN_GRAPH_INPUT', message);
}

function checkOffsets(offsets: Uint32Array, dataLen: number, name: string, dataName: string): void {
  if (!(offsets instanceof Uint32Array)) throw graphInputError(`${name} must be a Uint32Array`);
  if (offsets.length === 0) throw graphInputError(`${name} must have n + 1 >= 1 entries, got an empty array`);
  if (offsets[0] !== 0) throw graphInputError(`${name}[0] must be 0, got ${offsets[0]}`);
  for (let i = 1; i < offsets.length; i++) {
    if (offsets[i]! < offsets[i - 1]!) {
      throw graphInputError(`${name} must be monotone: ${name}[${i}] = ${offsets[i]} < ${name}[${i - 1}] = ${offsets[i - 1]}`);
    }
  }
  const last = offsets[offsets.length - 1]!;
  if (last !== dataLen) throw graphInputError(`${name}[${offsets.length - 1}] = ${last} must equal ${dataName}.length = ${dataLen}`);
}

/** Validates a CSR graph (lengths, monotone offsets, indices in range); returns `n`. */
export function checkGraph(g: CsrGraph): number {
  if (!(g.offsets instanceof Uint32Array)) throw graphInputError('offsets must be a Uint32Array');
  if (!(g.deps instanceof Uint32Array)) throw graphInputError('deps must be a Uint32Array');
  checkOffsets(g.offsets, g.deps.length, 'offsets', 'deps');
  const n = g.offsets.length - 1;
  const deps = g.deps;
  for (let k = 0; k < deps.length; k++) {
    if (deps[k]! >= n) throw graphInputError(`deps[${k}] = ${deps[k]} is out of range for ${n} nodes`);
  }
  return n;
}

/** Validates a byte table for `n` nodes. */
export function checkTable(t: ByteTable, n: number, name: string, bytesName: string): void {
  if (!(t.offsets instanceof Uint32Array)) throw graphInputError(`${name} must be a Uint32Array`);
  if (!(t.bytes instanceof Uint8Array)) throw graphInputError(`${bytesName} must be a Uint8Array`);
  if (t.offsets.length !== n + 1) {
    throw graphInputError(`${name} must have n + 1 = ${n + 1} entries (n from offsets), got ${t.offsets.length}`);
  }
  checkOffsets(t.offsets, t.bytes.length, name, bytesName);
}

/**
 * The reverse graph: node `d`'s dependents are `dependents[start[d] .. start[d+1])`, in increasing
 * index order; a node that lists `d` twice appears twice.
 */
export function reverseCsr(g: CsrGraph): { start: Uint32Array; dependents: Uint32Array } {
  const { offsets, deps } = g;
  const n = offsets.length - 1;
  const start = new Uint32Array(n + 1);
  for (let k = 0; k < deps.length; k++) start[deps[k]! + 1]!++;
  for (let i = 0; i < n; i++) start[i + 1]! += start[i]!;
  const cursor = start.slice(0, n);
  const dependents = new Uint32Array(deps.length);
  for (let i = 0; i < n; i++) {
    for (let k = offsets[i]!, end = offsets[i + 1]!; k < end; k++) dependents[cursor[deps[k]!]!++] = i;
  }
  return { start, dependents };
}

/** Builds a CSR graph from per-node dependency lists (tests, small graphs). */
export function csrFromLists(lists: ReadonlyArray<ReadonlyArray<number>>): CsrGraph {
  const offsets = new Uint32Array(lists.length + 1);
  let m = 0;
  lists.forEach((l, i) => {
    m += l.length;
    offsets[i + 1] = m;
  });
  const deps = new Uint32Array(m);
  let k = 0;
  for (const l of lists) for (const d of l) deps[k++] = d;
  return { offsets, deps };
}

/** Packs byte strings (a string is packed as UTF-8) into a {@link ByteTable}. */
export function byteTable(items: ReadonlyArray<Uint8Array | string>): ByteTable {
  const enc = new TextEncoder();
  const parts = items.map((x) => (typeof x === 'string' ? enc.encode(x) : x));
  const offsets = new Uint32Array(parts.length + 1);
  let total = 0;
  parts.forEach((p, i) => {
    total += p.length;
    offsets[i + 1] = total;
  });
  const bytes = new Uint8Array(total);
  parts.forEach((p, i) => bytes.set(p, offsets[i]!));
  return { offsets, bytes };
}
