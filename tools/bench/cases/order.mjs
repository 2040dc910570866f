// Peer libraries ordering the same seeded graphs as `core.toposort`. Each peer gets the graph
// in its own native representation, built untimed (the build time is reported as a metric);
// only the ordering call is timed, as for Cairn, whose native representation is CSR arrays.
import { createRequire } from 'node:module';
import { edgeList, generate, relabel } from '../generators.mjs';
import { check, timeSync } from '../lib/timing.mjs';

const require = createRequire(import.meta.url);

/** The relabeled graph as `[dep, node]` pairs (what most peers take). */
function edgesOf(shape, n) {
  return { edges: edgeList(relabel(generate(shape, n))) };
}

export const variants = {
  /** `toposort.array(nodes, edges)` (toposort 2.0.2: recursive DFS). */
  async toposort({ shape, n }) {
    const toposort = require('toposort');
    const { edges } = edgesOf(shape, n);
    const nodes = Array.from({ length: n }, (_, i) => i);
    return () => {
      const { ms, value } = timeSync(() => toposort.array(nodes, edges));
      check(value.length === n, 'toposort ordered every node');
      return ms;
    };
  },

  /** graphology `DirectedGraph` + graphology-dag `topologicalSort` (Kahn). */
  async graphology({ shape, n }) {
    const { DirectedGraph } = require('graphology');
    const { topologicalSort } = require('graphology-dag');
    const { edges } = edgesOf(shape, n);
    const built = timeSync(() => {
      const graph = new DirectedGraph();
      for (let i = 0; i < n; i++) graph.addNode(i);
      for (const [from, to] of edges) graph.addEdge(from, to);
      return graph;
    });
    return () => {
      const { ms, value } = timeSync(() => topologicalSort(built.value));
      check(value.length === n, 'graphology-dag ordered every node');
      return { ms, buildMs: built.ms };
    };
  },

  /** dependency-graph `DepGraph.overallOrder()` (DFS). */
  async 'dependency-graph'({ shape, n }) {
    const { DepGraph } = require('dependency-graph');
    const { edges } = edgesOf(shape, n);
    const built = timeSync(() => {
      const graph = new DepGraph();
      for (let i = 0; i < n; i++) graph.addNode(String(i));
      for (const [dep, node] of edges) graph.addDependency(String(node), String(dep));
      return graph;
    });
    return () => {
      const { ms, value } = timeSync(() => built.value.overallOrder());
      check(value.length === n, 'dependency-graph ordered every node');
      return { ms, buildMs: built.ms };
    };
  },
};
