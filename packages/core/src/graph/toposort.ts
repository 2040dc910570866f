import type { CsrGraph, OrderResult } from '../backend-types.js';
import { checkGraph, reverseCsr } from './csr.js';
import { findCycle } from './cycle.js';

/**
 * Kahn's algorithm, dependencies first: the queue starts with the dependency-free nodes in
 * index order and is FIFO; an emitted node releases its dependents in increasing index order.
 * In-degree counts duplicate dependencies (the reverse graph lists them twice, so they balance).
 * Iterative, O(V + E). Malformed input throws `CAIRN_GRAPH_INPUT`.
 */
export function toposort(g: CsrGraph): OrderResult {
  const n = checkGraph(g);
  return toposortUnchecked(g, n);
}

/** {@link toposort} on an already validated graph of `n` nodes. */
export function toposortUnchecked(g: CsrGraph, n: number): OrderResult {
  const { offsets } = g;
  const indeg = new Uint32Array(n);
  for (let i = 0; i < n; i++) indeg[i] = offsets[i + 1]! - offsets[i]!;
  const { start, dependents } = reverseCsr(g);
  const order = new Uint32Array(n);
  let tail = 0;
  for (let i = 0; i < n; i++) if (indeg[i] === 0) order[tail++] = i;
  for (let head = 0; head < tail; head++) {
    const u = order[head]!;
    for (let k = start[u]!, end = start[u + 1]!; k < end; k++) {
      const v = dependents[k]!;
      if (--indeg[v]! === 0) order[tail++] = v;
    }
  }
  if (tail === n) return { ok: true, order };
  return { ok: false, cycle: findCycle(g, order, tail) };
}
