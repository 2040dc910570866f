// Seeded graph generators for the benchmarks. Every generator is deterministic for a given
// (shape, n, seed): the same graph is handed to Cairn and to every peer.
//
// A graph is CSR: node `i` depends on `deps[offsets[i] .. offsets[i+1])` (edges point from a
// step to its dependencies, as in @cairn/core's `CsrGraph`). Generators emit nodes in creation
// order, so every dependency index is smaller than its dependent's index; `relabel()` applies a
// seeded permutation so that no ordering implementation is handed an already-sorted input.
//
// Shapes (n nodes):
//   chain    node i depends on i-1                                   n-1 edges, depth n
//   fanout   node 0 is the root; every other node depends on it      n-1 edges, depth 2
//   fanin    nodes 0..n-2 are independent; node n-1 depends on all   n-1 edges, depth 2
//   layered  layers of `width` nodes (default round(sqrt(n))); a node in layer L > 0 depends on
//            1..5 distinct nodes (uniform, so 3 on average) of layer L-1
//   lattice  a ceil(sqrt(n))-wide grid filled row by row; (r, c) depends on (r-1, c) and (r, c-1)

import { mulberry32 } from '../testenv/rng.mjs';

/** The shapes {@link generate} knows. */
export const SHAPES = Object.freeze(['chain', 'fanout', 'fanin', 'layered', 'lattice']);

/** Default seed of every generator. */
export const DEFAULT_SEED = 0xc0ffee;

/** mulberry32 (tools/testenv/rng.mjs), seeded: integers in [0, 2^32). */
export function prng(seed = DEFAULT_SEED) {
  const next = mulberry32(seed);
  // The float is the 32-bit draw divided by 2^32: multiplying back is exact.
  return () => next() * 4294967296;
}

/** Builds CSR arrays from a per-node dependency writer, growing the edge buffer as needed. */
function build(n, write) {
  const offsets = new Uint32Array(n + 1);
  let deps = new Uint32Array(Math.max(16, n * 2));
  let e = 0;
  const push = (d) => {
    if (e === deps.length) {
      const bigger = new Uint32Array(deps.length * 2);
      bigger.set(deps);
      deps = bigger;
    }
    deps[e++] = d;
  };
  for (let i = 0; i < n; i++) {
    write(i, push);
    offsets[i + 1] = e;
  }
  return { offsets, deps: deps.slice(0, e) };
}

function chain(n) {
  return build(n, (i, push) => {
    if (i > 0) push(i - 1);
  });
}

function fanout(n) {
  return build(n, (i, push) => {
    if (i > 0) push(0);
  });
}

function fanin(n) {
  return build(n, (i, push) => {
    if (i === n - 1) for (let d = 0; d < n - 1; d++) push(d);
  });
}

function layered(n, { seed = DEFAULT_SEED, width = Math.max(1, Math.round(Math.sqrt(n))) } = {}) {
  const rand = prng(seed);
  const picked = new Set();
  return build(n, (i, push) => {
    const layer = Math.floor(i / width);
    if (layer === 0) return;
    const start = (layer - 1) * width;
    const k = Math.min(width, 1 + (rand() % 5));
    picked.clear();
    while (picked.size < k) picked.add(start + (rand() % width));
    for (const d of picked) push(d);
  });
}

function lattice(n) {
  const side = Math.max(1, Math.ceil(Math.sqrt(n)));
  return build(n, (i, push) => {
    const r = Math.floor(i / side);
    const c = i % side;
    if (r > 0) push(i - side);
    if (c > 0) push(i - 1);
  });
}

/**
 * A seeded graph of `n` nodes in CSR form, dependencies before dependents (`deps < i`).
 * @param {'chain'|'fanout'|'fanin'|'layered'|'lattice'} shape
 * @param {number} n
 * @param {{ seed?: number, width?: number }} [options] seed (default {@link DEFAULT_SEED}); width of `layered`
 * @returns {{ shape: string, n: number, offsets: Uint32Array, deps: Uint32Array }}
 */
export function generate(shape, n, options = {}) {
  if (!Number.isInteger(n) || n < 1) throw new Error(`generate(): n must be a positive integer, got ${n}`);
  const make = { chain, fanout, fanin, layered, lattice }[shape];
  if (!make) throw new Error(`generate(): unknown shape "${shape}"; one of ${SHAPES.join(', ')}`);
  return { shape, n, ...make(n, options) };
}

/** A seeded permutation of 0..n-1 (Fisher–Yates). */
export function permutation(n, seed = DEFAULT_SEED) {
  const rand = prng(seed ^ 0x9e3779b9);
  const p = new Uint32Array(n);
  for (let i = 0; i < n; i++) p[i] = i;
  for (let i = n - 1; i > 0; i--) {
    const j = rand() % (i + 1);
    const t = p[i];
    p[i] = p[j];
    p[j] = t;
  }
  return p;
}

/** The same graph with node `i` renamed `perm[i]` (default: a seeded permutation). */
export function relabel(graph, perm = permutation(graph.n)) {
  const { n, offsets, deps } = graph;
  const inv = new Uint32Array(n);
  for (let i = 0; i < n; i++) inv[perm[i]] = i;
  const o2 = new Uint32Array(n + 1);
  for (let j = 0; j < n; j++) o2[j + 1] = o2[j] + (offsets[inv[j] + 1] - offsets[inv[j]]);
  const d2 = new Uint32Array(deps.length);
  for (let j = 0; j < n; j++) {
    const i = inv[j];
    let w = o2[j];
    for (let e = offsets[i]; e < offsets[i + 1]; e++) d2[w++] = perm[deps[e]];
  }
  return { ...graph, offsets: o2, deps: d2, relabeled: true };
}

/** Nodes nothing depends on (the natural run targets), ascending. */
export function sinks(graph) {
  const used = new Uint8Array(graph.n);
  for (let e = 0; e < graph.deps.length; e++) used[graph.deps[e]] = 1;
  const out = [];
  for (let i = 0; i < graph.n; i++) if (!used[i]) out.push(i);
  return Uint32Array.from(out);
}

/** Edge list `[dep, node]` ("dep before node"), the form toposort and p-graph take. */
export function edgeList(graph, key = (i) => i) {
  const { n, offsets, deps } = graph;
  const edges = new Array(deps.length);
  let k = 0;
  for (let i = 0; i < n; i++) for (let e = offsets[i]; e < offsets[i + 1]; e++) edges[k++] = [key(deps[e]), key(i)];
  return edges;
}

/**
 * `@cairn/core` handles for a graph built with `deps < i` (not relabeled): node i is
 * `apply({ name: 'n<i>', version: 'v1', inputs: { i, deps: [handles…], out: OUT } })`.
 * Returns the handles; run targets are `sinks(graph)`.
 */
export function toHandles(core, graph, fn = noop) {
  const { apply, OUT } = core;
  const { n, offsets, deps } = graph;
  const handles = new Array(n);
  for (let i = 0; i < n; i++) {
    const ds = [];
    for (let e = offsets[i]; e < offsets[i + 1]; e++) ds.push(handles[deps[e]]);
    handles[i] = apply({ name: `n${i}`, fn, version: 'v1', inputs: { i, deps: ds, out: OUT } });
  }
  return handles;
}

/**
 * `StepSpec`s for a graph built with `deps < i`: node i is a path step named `n<i>` with
 * `hashAttrs: { i, tag }` (change `tag` to get a graph with fresh identities).
 */
export function toSpecs(core, graph, { tag = 'bench', fn = noop } = {}) {
  const { StepSpec } = core;
  const { n, offsets, deps } = graph;
  const specs = new Array(n);
  for (let i = 0; i < n; i++) {
    const ds = [];
    for (let e = offsets[i]; e < offsets[i + 1]; e++) ds.push(specs[deps[e]]);
    specs[i] = new StepSpec({ name: `n${i}`, hashAttrs: { i, tag }, deps: ds, fn });
  }
  return specs;
}

/** Name and attribute byte tables for `fingerprintAll`, shaped like lowering produces them. */
export function byteTables(graph) {
  const { n } = graph;
  const enc = new TextEncoder();
  const table = (text) => {
    const offsets = new Uint32Array(n + 1);
    const parts = new Array(n);
    let total = 0;
    for (let i = 0; i < n; i++) {
      parts[i] = enc.encode(text(i));
      total += parts[i].length;
      offsets[i + 1] = total;
    }
    const bytes = new Uint8Array(total);
    for (let i = 0; i < n; i++) bytes.set(parts[i], offsets[i]);
    return { offsets, bytes };
  };
  return {
    names: table((i) => `n${i}`),
    attrs: table((i) => `{"deps":[],"fingerprint":"${(i * 2654435761 >>> 0).toString(16).padStart(16, '0')}","version":"v1"}`),
  };
}

function noop() {
  return undefined;
}
