#!/usr/bin/env node
// Regenerates fixtures/golden/{xxh64,fingerprints,graphs}.json.
//
// Expected values come from independent references, never from the code under test:
// XXH64 from xxhash-wasm, step hashes from a literal string transcription of
// docs/identity.md, orders from straightforward recursive/array transcriptions of the
// semantics in packages/core/src/backend-types.ts.
//
//   node tools/scripts/gen-golden.mjs          # write the files
//   node tools/scripts/gen-golden.mjs --check  # exit 1 if the files are stale
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import xxhash from 'xxhash-wasm';

const outDir = fileURLToPath(new URL('../../fixtures/golden/', import.meta.url));
const { h64, h64Raw } = await xxhash();
const hex = (h) => h.toString(16).padStart(16, '0');

// ---- XXH64 -----------------------------------------------------------------------------

const affine = (length, mul = 31, add = 7) => ({ affine: { length, mul, add } });
function bytesOf(input) {
  if ('utf8' in input) return Buffer.from(input.utf8, 'utf8');
  if ('hex' in input) return Buffer.from(input.hex, 'hex');
  const { length, mul, add } = input.affine;
  const b = new Uint8Array(length);
  for (let i = 0; i < length; i++) b[i] = (i * mul + add) & 0xff;
  return b;
}

const xxVectors = [];
function xx(name, input, seed = 0n) {
  const data = bytesOf(input);
  const hash = hex(h64Raw(data, seed));
  if ('utf8' in input && hex(h64(input.utf8, seed)) !== hash) throw new Error(`h64/h64Raw disagree on ${name}`);
  xxVectors.push({ name, input, seed: seed.toString(), hash });
}
xx('empty', { utf8: '' });
xx('a', { utf8: 'a' });
xx('abc', { utf8: 'abc' });
xx('sentence', { utf8: 'The quick brown fox jumps over the lazy dog' });
for (let n = 1; n <= 64; n++) xx(`affine-${n}`, affine(n));
for (const n of [65, 95, 96, 97, 127, 128, 129, 255, 256, 1000, 4096]) xx(`affine-${n}`, affine(n, 131, 3));
xx('high-bytes', { hex: 'ff80fe7f00c0c1f5f8fdfeff0102030405060708090a0b0c0d0e0f10111213141516171819' });
xx('affine-1MiB', affine(1 << 20));
xx('affine-1MiB-seeded', affine(1 << 20, 17, 250), 0x9e3779b185ebca87n);
const seeds = [1n, 42n, 0x9e3779b185ebca87n, 0xffffffffffffffffn, 0x100000000n, 0xffffffffn];
for (const s of seeds) for (const n of [0, 1, 4, 8, 31, 32, 33, 100]) xx(`seed-${s.toString(16)}-len-${n}`, affine(n, 7, 1), s);
xx('utf8-latin', { utf8: 'héllo wörld, ñandú façade' });
xx('utf8-cjk', { utf8: '日本語のテキストと中文字符' });
xx('utf8-astral', { utf8: '😀 emoji 🎉 𝄞 music 🏳️‍🌈' });
xx('utf8-mixed-long', { utf8: 'Ωμέγα — '.repeat(9) + '🚀'.repeat(5) }, 7n);

// ---- graph references ------------------------------------------------------------------

/** Kahn per backend-types.ts, written plainly with arrays. */
function refToposort(adj) {
  const n = adj.length;
  const indeg = adj.map((d) => d.length);
  const dependents = adj.map(() => []);
  adj.forEach((ds, i) => ds.forEach((d) => dependents[d].push(i)));
  const order = [];
  for (let i = 0; i < n; i++) if (indeg[i] === 0) order.push(i);
  for (let h = 0; h < order.length; h++) {
    for (const v of dependents[order[h]]) if (--indeg[v] === 0) order.push(v);
  }
  if (order.length === n) return { order };
  const done = new Set(order);
  let u = [...adj.keys()].find((i) => !done.has(i));
  const walk = [];
  while (!walk.includes(u)) {
    walk.push(u);
    u = adj[u].find((d) => !done.has(d));
  }
  return { cycle: walk.slice(walk.indexOf(u)) };
}

/** expand per the issue: the recursive definition, literally. */
function refExpand(adj, roots, built, seen) {
  const out = [];
  const stack = [];
  let cycle = null;
  const visit = (u) => {
    if (cycle || seen.has(u)) return;
    if (stack.includes(u)) {
      cycle = stack.slice(stack.indexOf(u));
      return;
    }
    stack.push(u);
    if (!built.has(u)) for (const d of adj[u]) if (!cycle) visit(d);
    if (cycle) return;
    stack.pop();
    seen.add(u);
    out.push(u);
  };
  for (const r of roots) if (!cycle) visit(r);
  return cycle ? { cycle } : { order: out };
}

/** Step hashes per docs/identity.md, with strings. */
function refFingerprints(nodes) {
  const adj = nodes.map((n) => n.deps);
  const topo = refToposort(adj);
  if (topo.cycle) return { cycle: topo.cycle };
  const hashes = [];
  const byCodePoint = (a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b));
  for (const i of topo.order) {
    const { name, attrs, deps } = nodes[i];
    const depNames = deps.map((d) => `${nodes[d].name}-${hashes[d]}`).sort(byCodePoint);
    const identity = `{"deps":[${depNames.map((s) => JSON.stringify(s)).join(',')}],"hashAttrs":${attrs},"name":${JSON.stringify(name)}}`;
    // The identity is also canonicalize({ name, hashAttrs, deps }) (keys in code-point order).
    const viaObject = JSON.stringify({ deps: depNames, hashAttrs: JSON.parse(attrs), name });
    if (viaObject !== identity) throw new Error(`identity mismatch for ${name}`);
    hashes[i] = hex(h64(identity));
  }
  return { hashes };
}

// ---- fingerprint cases -----------------------------------------------------------------

const node = (name, attrs, deps = []) => ({ name, attrs, deps });
const fpCases = [
  { name: 'empty graph', nodes: [] },
  { name: 'single node', nodes: [node('train', '{"lr":0.1}')] },
  { name: 'single node, null attrs', nodes: [node('a', 'null')] },
  { name: 'chain', nodes: [node('load', '{"path":"data.csv"}'), node('clean', '{"drop":["x","y"]}', [0]), node('train', '{"epochs":3,"lr":0.001}', [1])] },
  { name: 'chain, reversed indices', nodes: [node('train', '{"epochs":3,"lr":0.001}', [1]), node('clean', '{"drop":["x","y"]}', [2]), node('load', '{"path":"data.csv"}')] },
  { name: 'diamond', nodes: [node('root', '{}'), node('left', '{"k":1}', [0]), node('right', '{"k":2}', [0]), node('join', '{}', [1, 2])] },
  { name: 'diamond, deps listed the other way', nodes: [node('root', '{}'), node('left', '{"k":1}', [0]), node('right', '{"k":2}', [0]), node('join', '{}', [2, 1])] },
  { name: 'duplicate deps kept', nodes: [node('x', '1'), node('y', '2'), node('z', '3', [0, 1, 0])] },
  { name: 'duplicate deps kept, reordered', nodes: [node('x', '1'), node('y', '2'), node('z', '3', [1, 0, 0])] },
  { name: 'same name twice, different attrs', nodes: [node('s', '{"v":1}'), node('s', '{"v":2}'), node('t', '{}', [1, 0])] },
  { name: 'names needing JSON escapes', nodes: [node('a"b\\c', '{"q":"a\\"b"}'), node('tab\there\nnl\u0001\u001f\u007f', '[]', [0]), node('top', '{}', [1, 0])] },
  { name: 'unicode names', nodes: [node('ñandú', '{"é":"ü"}'), node('日本語', '{}', [0]), node('emoji😀', '{"x":[1,2,{"y":null}]}', [1, 0])] },
  // U+FF5E sorts before U+1F600 by code point, after it by UTF-16 code unit.
  { name: 'astral-plane names sort by code point', nodes: [node('\u{1F600}', '{}'), node('\uFF5E', '{}'), node('\u{10000}', '{}'), node('\uE000', '{}'), node('top', '{}', [0, 1, 2, 3])] },
  // nameWithHash order is on the whole string: "a-…" vs "a-b-…" vs "a0-…" vs "a!-…".
  { name: 'prefix names sort on name-with-hash', nodes: [node('a', '{}'), node('a-b', '{}'), node('a0', '{}'), node('a!', '{}'), node('top', '{}', [2, 0, 3, 1])] },
  { name: 'nested canonical attrs', nodes: [node('p', '{"a":[1,2.5,-3,true,false,null],"b":{"__bigint__":"123456789012345678901234567890"},"c":"line\\nbreak"}')] },
  { name: 'fan-in', nodes: [...Array.from({ length: 6 }, (_, i) => node(`src${i}`, `{"i":${i}}`)), node('sink', '{}', [5, 3, 1, 0, 2, 4])] },
  { name: 'self-loop', nodes: [node('s', '{}', [0])] },
  { name: 'two-cycle behind a chain', nodes: [node('a', '{}'), node('b', '{}', [0, 2]), node('c', '{}', [1]), node('d', '{}', [2])] },
];
for (const c of fpCases) Object.assign(c, refFingerprints(c.nodes));
const same = (a, b) => JSON.stringify(fpCases.find((c) => c.name === a).hashes) === JSON.stringify(fpCases.find((c) => c.name === b).hashes);
if (!same('diamond', 'diamond, deps listed the other way') || !same('duplicate deps kept', 'duplicate deps kept, reordered')) {
  throw new Error('dependency order changed a hash');
}

// ---- lowered-step cases ----------------------------------------------------------------

/**
 * A lowered `apply` step per docs/identity.md: fingerprint = XXH64(payload), hashAttrs =
 * { deps: ["name@version", … in listed order], expectedFingerprint?, fingerprint, version },
 * then the ordinary step hash. `expected` (optional) is the pinned fingerprint.
 */
function refLowered(nodes) {
  const fingerprints = nodes.map((n) => hex(h64(n.payload)));
  const withAttrs = nodes.map((n, i) => {
    const attrs = { deps: n.deps.map((d) => `${nodes[d].name}@${nodes[d].version}`) };
    if (n.expected !== undefined) attrs.expectedFingerprint = n.expected;
    Object.assign(attrs, { fingerprint: fingerprints[i], version: n.version });
    return node(n.name, JSON.stringify(attrs), n.deps);
  });
  const { hashes } = refFingerprints(withAttrs);
  return { fingerprints, hashes };
}

const step = (name, version, payload, deps = [], expected) => ({ name, version, payload, deps, ...(expected === undefined ? {} : { expected }) });
const loweredCases = [
  { name: 'empty', nodes: [] },
  { name: 'one step', nodes: [step('tokenize', 'v1', '{"out":"<OUT>","vocab":32000}')] },
  { name: 'chain', nodes: [step('load', '2026.11.30', '{"path":"data.csv"}'), step('clean', 'v2', '{"in":"<dep:load@2026.11.30>","out":"<OUT>"}', [0]), step('train', 'v3dev', '{"data":"<dep:clean@v2>","lr":0.001}', [1])] },
  { name: 'diamond, deps in listed order', nodes: [step('root', 'v1', '{}'), step('left', 'v1', '{"k":1}', [0]), step('right', 'v1', '{"k":2}', [0]), step('join', 'v1', '{"a":"<dep:right@v1>","b":"<dep:left@v1>"}', [2, 1])] },
  { name: 'diamond, deps listed the other way', nodes: [step('root', 'v1', '{}'), step('left', 'v1', '{"k":1}', [0]), step('right', 'v1', '{"k":2}', [0]), step('join', 'v1', '{"a":"<dep:right@v1>","b":"<dep:left@v1>"}', [1, 2])] },
  { name: 'pinned fingerprint', nodes: [step('a', 'v1', '{"x":1}', [], 'f00dfeedf00dfeed'), step('b', 'v1', '{}', [0], 'needs "escaping" \\ \u0001')] },
  { name: 'names and versions needing JSON escapes', nodes: [step('a"b\\c', 'v"1', '"x"'), step('t\\u', '1\\0', '[]', [0]), step('top', 'v', '{}', [1, 0])] },
  { name: 'unicode names', nodes: [step('ñandú', 'é1', '{"é":"ü"}'), step('日本語', 'v1', '{}', [0]), step('emoji😀', 'v1', '{"x":[1,2,{"y":null}]}', [1, 0])] },
  { name: 'same name, two versions', nodes: [step('s', 'v1', '{"v":1}'), step('s', 'v2', '{"v":2}'), step('t', 'v1', '{}', [1, 0])] },
  { name: 'fan-in with a duplicate dependency', nodes: [...Array.from({ length: 5 }, (_, i) => step(`src${i}`, 'v1', `{"i":${i}}`)), step('sink', 'v1', '{}', [4, 2, 0, 2, 1, 3])] },
];
for (const c of loweredCases) Object.assign(c, refLowered(c.nodes));

// ---- graph cases -----------------------------------------------------------------------

function rng(seed) {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0) / 2 ** 32);
}
function randomDag(n, maxDeps, seed, cycles = 0) {
  const r = rng(seed);
  const adj = Array.from({ length: n }, (_, i) => Array.from({ length: i === 0 ? 0 : Math.floor(r() * (maxDeps + 1)) }, () => Math.floor(r() * i)));
  for (let k = 0; k < cycles; k++) {
    const a = Math.floor(r() * n);
    adj[Math.floor(r() * (a + 1))].push(a); // an edge from a lower to a higher index can close a cycle
  }
  return adj;
}

const topoCases = [
  { name: 'empty', deps: [] },
  { name: 'single', deps: [[]] },
  { name: 'chain in reverse index order', deps: [[1], [2], []] },
  { name: 'FIFO release in index order', deps: [[3], [0], [0], []] },
  { name: 'diamond', deps: [[], [0], [0], [1, 2]] },
  { name: 'duplicate deps', deps: [[], [0, 0], [1, 0, 1]] },
  { name: 'two roots interleave', deps: [[2], [3], [], [], [0, 1]] },
  { name: 'self-loop', deps: [[0]] },
  { name: 'self-loop after a good prefix', deps: [[], [0, 1]] },
  { name: 'two-cycle', deps: [[1], [0]] },
  { name: 'cycle reached through a tail', deps: [[1], [2], [3], [1]] },
  { name: 'walk skips emitted deps', deps: [[], [0, 2], [0, 1]] },
  { name: 'two disjoint cycles, lowest walk wins', deps: [[], [4], [3], [2], [1]] },
  { name: 'cycle with a duplicate edge', deps: [[1, 1], [0]] },
  { name: 'random dag 40', deps: randomDag(40, 3, 1) },
  { name: 'random dag 60 with cycles', deps: randomDag(60, 3, 2, 3) },
  { name: 'random dag 30 with duplicates', deps: randomDag(30, 4, 3).map((d) => [...d, ...d.slice(0, 1)]) },
];
for (const c of topoCases) Object.assign(c, refToposort(c.deps));

const diamond = [[], [0], [0], [1, 2]];
const expandCases = [
  { name: 'empty graph', deps: [], built: [], seen: [], calls: [{ roots: [] }] },
  { name: 'diamond from the top', deps: diamond, built: [], seen: [], calls: [{ roots: [3] }] },
  { name: 'diamond, dependencies visited in listed order', deps: [[], [0], [0], [2, 1]], built: [], seen: [], calls: [{ roots: [3] }] },
  { name: 'built node is emitted but not descended', deps: diamond, built: [1], seen: [], calls: [{ roots: [3] }] },
  { name: 'seen nodes are skipped', deps: diamond, built: [], seen: [0, 2], calls: [{ roots: [3] }] },
  { name: 'seen carries over between calls', deps: diamond, built: [], seen: [], calls: [{ roots: [1] }, { roots: [3, 2] }, { roots: [0, 3] }] },
  { name: 'roots in order', deps: [[], [], [0], [1]], built: [], seen: [], calls: [{ roots: [3, 2, 1] }] },
  { name: 'self-loop', deps: [[0]], built: [], seen: [], calls: [{ roots: [0] }] },
  { name: 'cycle after emitting a branch', deps: [[], [0, 2], [3], [2], [1]], built: [], seen: [], calls: [{ roots: [4] }] },
  { name: 'cycle broken by a built node', deps: [[1], [0]], built: [1], seen: [], calls: [{ roots: [0] }] },
  { name: 'cycle avoided through seen', deps: [[1], [0]], built: [], seen: [1], calls: [{ roots: [0] }] },
  { name: 'duplicate deps', deps: [[], [0, 0], [1, 0, 1]], built: [], seen: [], calls: [{ roots: [2, 2] }] },
  { name: 'random dag 40', deps: randomDag(40, 3, 4), built: [3, 17, 25], seen: [5], calls: [{ roots: [39, 20] }, { roots: [38, 0] }] },
  { name: 'random dag 50 with cycles', deps: randomDag(50, 3, 5, 4), built: [], seen: [], calls: [{ roots: [10] }, { roots: [49, 48, 30] }] },
];
for (const c of expandCases) {
  const built = new Set(c.built);
  const seen = new Set(c.seen);
  for (const call of c.calls) {
    const r = refExpand(c.deps, call.roots, built, seen);
    Object.assign(call, r);
    if (r.cycle) break; // later calls are not attempted after a cycle
  }
  c.calls = c.calls.filter((call) => call.order || call.cycle);
  c.seenAfter = [...seen].sort((a, b) => a - b);
}

// ---- write -----------------------------------------------------------------------------

const files = {
  'xxh64.json': {
    description: 'XXH64 vectors verified against xxhash-wasm. input: {utf8} | {hex} | {affine:{length,mul,add}} where byte i = (i*mul+add) & 0xff. seed: decimal u64. hash: 16 lowercase hex digits.',
    vectors: xxVectors,
  },
  'fingerprints.json': {
    description: 'Merkle step hashes per docs/identity.md. attrs are canonical JSON texts given literally; deps are node indices. hashes[i] is node i\'s hash; a cyclic graph has cycle instead (same report as toposort).',
    cases: fpCases,
  },
  'lowered.json': {
    description: 'Lowered apply steps per docs/identity.md: nodes numbered dependencies first, each with name, version, payload (the canonical inputs text), deps (indices) and optionally expected (a pinned fingerprint). fingerprints[i] = XXH64(payload); hashes[i] is the step hash with hashAttrs {deps:["name@version" in listed order], expectedFingerprint?, fingerprint, version}.',
    cases: loweredCases,
  },
  'graphs.json': {
    description: 'toposort: deps[i] lists node i\'s dependencies; expect order or cycle. expand: built/seen/seenAfter list node indices; calls run in order sharing seen; each call expects order or cycle.',
    toposort: topoCases,
    expand: expandCases,
  },
};

// One vector per line keeps diffs readable.
const render = (obj) => {
  const lines = ['{'];
  const keys = Object.keys(obj);
  keys.forEach((k, ki) => {
    const v = obj[k];
    const comma = ki < keys.length - 1 ? ',' : '';
    if (Array.isArray(v)) {
      lines.push(`  ${JSON.stringify(k)}: [`);
      v.forEach((item, i) => lines.push(`    ${JSON.stringify(item)}${i < v.length - 1 ? ',' : ''}`));
      lines.push(`  ]${comma}`);
    } else lines.push(`  ${JSON.stringify(k)}: ${JSON.stringify(v)}${comma}`);
  });
  lines.push('}', '');
  return lines.join('\n');
};

const check = process.argv.includes('--check');
let stale = false;
mkdirSync(outDir, { recursive: true });
for (const [file, obj] of Object.entries(files)) {
  const text = render(obj);
  const path = outDir + file;
  if (check) {
    let old = '';
    try {
      old = readFileSync(path, 'utf8');
    } catch {}
    if (old !== text) {
      console.error(`stale: ${path}`);
      stale = true;
    }
  } else writeFileSync(path, text);
}
if (stale) process.exit(1);
console.log(check ? 'golden vectors are up to date' : `wrote ${Object.keys(files).join(', ')} to ${outDir}`);
