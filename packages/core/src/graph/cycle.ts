import type { CsrGraph } from '../backend-types.js';

/**
 * The cycle reported when Kahn's algorithm stops short. Walks from the smallest-index node not
 * emitted, always to its first listed dependency not emitted (one exists: its in-degree never
 * reached zero), until a node repeats; the cycle is the walk from that node's first occurrence.
 */
export function findCycle(g: CsrGraph, emitted: Uint32Array, emittedCount: number): Uint32Array {
  const { offsets, deps } = g;
  const n = offsets.length - 1;
  const done = new Uint8Array(n);
  for (let k = 0; k < emittedCount; k++) done[emitted[k]!] = 1;
  const pos = new Int32Array(n).fill(-1);
  const walk: number[] = [];
  let u = done.indexOf(0);
  for (;;) {
    if (pos[u] !== -1) return Uint32Array.from(walk.slice(pos[u]));
    pos[u] = walk.length;
    walk.push(u);
    let next = -1;
    for (let k = offsets[u]!, end = offsets[u + 1]!; k < end; k++) {
      if (!done[deps[k]!]) {
        next = deps[k]!;
        break;
      }
    }
    u = next;
  }
}
