import { getBackend } from './backend.js';
import type { CsrGraph } from './backend-types.js';
import { collectSpecs } from './codec.js';
import { CairnError } from './errors.js';
import type { StepSpec } from './spec.js';

/** A spec graph in CSR form with its node table. */
export interface IndexedGraph {
  /** Specs, dependencies first; index `i` is node `i`. */
  readonly nodes: readonly StepSpec[];
  /** The CSR graph over `nodes`. */
  readonly graph: CsrGraph;
  /** Node index of each spec. */
  readonly index: ReadonlyMap<StepSpec, number>;
}

/** Indexes every spec reachable from `roots` (iterative, O(V+E)). */
export function indexSpecs(roots: readonly StepSpec[]): IndexedGraph {
  const nodes = collectSpecs(roots);
  const index = new Map<StepSpec, number>();
  nodes.forEach((s, i) => index.set(s, i));
  const offsets = new Uint32Array(nodes.length + 1);
  let e = 0;
  nodes.forEach((s, i) => {
    e += s.deps.length;
    offsets[i + 1] = e;
  });
  const deps = new Uint32Array(e);
  e = 0;
  for (const s of nodes) for (const d of s.deps) deps[e++] = index.get(d) as number;
  return { nodes, graph: { offsets, deps }, index };
}

/** Result of {@link detectCycle}: data, the caller decides how to fail. */
export type CycleReport = { readonly hasCycle: false } | { readonly hasCycle: true; readonly cycle: readonly string[] };

/** Checks a CSR graph with names for a cycle, returning it as a path of names. */
export function detectCycle(graph: CsrGraph, names: readonly string[]): CycleReport {
  const r = getBackend().toposort(graph);
  if (r.ok) return { hasCycle: false };
  return { hasCycle: true, cycle: [...r.cycle].map((i) => names[i] ?? `#${i}`) };
}

/** Formats a cycle as `a -> b -> c -> a`. */
export function formatCycle(cycle: readonly string[]): string {
  return [...cycle, cycle[0]].join(' -> ');
}

/** Specs reachable from `roots` in dependency order (Kahn; deterministic). */
export function toposortSpecs(roots: readonly StepSpec[]): StepSpec[] {
  const { nodes, graph } = indexSpecs(roots);
  const r = getBackend().toposort(graph);
  if (!r.ok) {
    const names = [...r.cycle].map((i) => (nodes[i] as StepSpec).name);
    throw new CairnError('CAIRN_GRAPH_CYCLE', `Step graph has a cycle: ${formatCycle(names)}. Break the cycle.`, { step: names[0] });
  }
  return [...r.order].map((i) => nodes[i] as StepSpec);
}

/**
 * Post-order expansion from `roots`: the specs not yet seen, dependencies first, not
 * descending below a spec for which `isBuilt` is true (it is still listed, as a cache-only
 * leaf). Pass the same `seen` set across calls to deduplicate a whole run.
 */
export function expandSpecs(
  roots: readonly StepSpec[],
  isBuilt: (spec: StepSpec) => boolean,
  seen: Set<StepSpec> = new Set(),
): StepSpec[] {
  const out: StepSpec[] = [];
  const onStack = new Set<StepSpec>();
  const stack: StepSpec[] = [];
  const next: number[] = [];
  const built: boolean[] = [];
  for (const root of roots) {
    if (seen.has(root)) continue;
    stack.push(root);
    next.push(0);
    built.push(isBuilt(root));
    onStack.add(root);
    while (stack.length > 0) {
      const top = stack.length - 1;
      const node = stack[top] as StepSpec;
      const i = next[top] as number;
      if (!built[top] && i < node.deps.length) {
        next[top] = i + 1;
        const d = node.deps[i] as StepSpec;
        if (seen.has(d)) continue;
        if (onStack.has(d)) {
          throw new CairnError('CAIRN_GRAPH_CYCLE', `Step "${d.name}" depends on itself. Break the cycle.`, { step: d.name });
        }
        stack.push(d);
        next.push(0);
        built.push(isBuilt(d));
        onStack.add(d);
      } else {
        stack.pop();
        next.pop();
        built.pop();
        onStack.delete(node);
        seen.add(node);
        out.push(node);
      }
    }
  }
  return out;
}
