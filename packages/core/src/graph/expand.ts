import type { CsrGraph, OrderResult } from '../backend-types.js';
import { checkGraph, graphInputError } from './csr.js';

/**
 * The iterative form of: `for r of roots: visit(r)`; `visit(u)`: if `seen[u]` return; if `u` is
 * on the stack, the cycle is the stack from `u` to the top; push `u`; unless `built[u]`, visit
 * each dependency in listed order; pop `u`; `seen[u] = 1`; emit `u`.
 * Returns the emitted post-order. `seen` is mutated, and keeps the marks of nodes emitted before
 * a cycle was found. Malformed input throws `CAIRN_GRAPH_INPUT`.
 */
export function expand(g: CsrGraph, roots: Uint32Array, built: Uint8Array, seen: Uint8Array): OrderResult {
  const n = checkGraph(g);
  if (!(roots instanceof Uint32Array)) throw graphInputError('roots must be a Uint32Array');
  if (!(built instanceof Uint8Array)) throw graphInputError('built must be a Uint8Array');
  if (!(seen instanceof Uint8Array)) throw graphInputError('seen must be a Uint8Array');
  for (let k = 0; k < roots.length; k++) {
    if (roots[k]! >= n) throw graphInputError(`roots[${k}] = ${roots[k]} is out of range for ${n} nodes`);
  }
  if (built.length !== n) throw graphInputError(`built must have n = ${n} entries, got ${built.length}`);
  if (seen.length !== n) throw graphInputError(`seen must have n = ${n} entries, got ${seen.length}`);

  const { offsets, deps } = g;
  const onStack = new Uint8Array(n);
  // Parallel stacks: node, next dependency position, end of its dependencies.
  let cap = 64;
  let sNode = new Uint32Array(cap);
  let sNext = new Uint32Array(cap);
  let sEnd = new Uint32Array(cap);
  let top = -1;
  const out = new Uint32Array(n);
  let count = 0;
  const push = (u: number): void => {
    if (++top === cap) {
      cap *= 2;
      const grow = (a: Uint32Array<ArrayBuffer>): Uint32Array<ArrayBuffer> => {
        const b = new Uint32Array(cap);
        b.set(a);
        return b;
      };
      sNode = grow(sNode);
      sNext = grow(sNext);
      sEnd = grow(sEnd);
    }
    onStack[u] = 1;
    sNode[top] = u;
    if (built[u]) {
      sNext[top] = 0;
      sEnd[top] = 0;
    } else {
      sNext[top] = offsets[u]!;
      sEnd[top] = offsets[u + 1]!;
    }
  };
  for (let k = 0; k < roots.length; k++) {
    const r = roots[k]!;
    if (seen[r]) continue;
    push(r);
    while (top >= 0) {
      if (sNext[top]! < sEnd[top]!) {
        const d = deps[sNext[top]!++]!;
        if (seen[d]) continue;
        if (onStack[d]) {
          let at = top;
          while (sNode[at] !== d) at--;
          return { ok: false, cycle: sNode.slice(at, top + 1) };
        }
        push(d);
      } else {
        const u = sNode[top--]!;
        onStack[u] = 0;
        seen[u] = 1;
        out[count++] = u;
      }
    }
  }
  return { ok: true, order: count === n ? out : out.slice(0, count) };
}
