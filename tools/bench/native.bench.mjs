#!/usr/bin/env node
// Native (Rust N-API) vs TypeScript fallback on a large layered DAG, plus XXH64 throughput.
//
//   npm run build -w @cairn/native && node tools/bench/native.bench.mjs [--nodes 1000000] [--runs 5]
//   … --compare OTHER.node   also times another build of the module (e.g. main's), side by side
//
// The TypeScript side is bundled on the fly from packages/core/src with esbuild (a tsup
// dependency), so no build of @cairn/core is needed and exactly the fallback code is measured.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const require = createRequire(import.meta.url);
const root = fileURLToPath(new URL('../../', import.meta.url));
const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const N = arg('nodes', 1_000_000);
const WIDTH = arg('width', 1000);
const DEPS = arg('deps', 3);
const RUNS = arg('runs', 5);
const HASH_MIB = arg('mib', 64);
const CALLS = arg('calls', 100_000);
const compareWith = process.argv.includes('--compare') ? process.argv[process.argv.indexOf('--compare') + 1] : null;

const native = require('@cairn/native');
if (!native.binding) {
  console.error(`native build not loaded (${native.loadErrors.map((e) => e.message).join('; ') || 'CAIRN_NATIVE=0'}); run npm run build -w @cairn/native`);
  process.exit(1);
}
const nb = native.binding;
/** Another build of the module, timed in the same run (`--compare`), or null. */
const ob = compareWith ? require(resolve(compareWith)) : null;

async function loadJsFallback() {
  const { build } = await import(require.resolve('esbuild', { paths: [root] }));
  const src = join(root, 'packages/core/src');
  const out = await build({
    stdin: {
      contents: `export { toposort } from './graph/toposort.ts';
        export { expand } from './graph/expand.ts';
        export { fingerprintAll } from './graph/fingerprint-all.ts';
        export { xxh64Pure, xxh64Ready } from './hash/xxh64.ts';`,
      resolveDir: src,
      loader: 'ts',
    },
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    write: false,
    logLevel: 'error',
  });
  const dir = mkdtempSync(join(tmpdir(), 'cairn-bench-'));
  const file = join(dir, 'fallback.mjs');
  writeFileSync(file, out.outputFiles[0].text);
  try {
    return await import(pathToFileURL(file).href);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function rng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), s | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Layers of WIDTH nodes; every node past the first layer has DEPS random deps in the layer before. */
function layeredDag() {
  const r = rng(42);
  const offsets = new Uint32Array(N + 1);
  const deps = new Uint32Array(Math.max(0, N - WIDTH) * DEPS);
  let m = 0;
  for (let i = 0; i < N; i++) {
    const layer = Math.floor(i / WIDTH);
    if (layer > 0) for (let k = 0; k < DEPS; k++) deps[m++] = (layer - 1) * WIDTH + Math.floor(r() * WIDTH);
    offsets[i + 1] = m;
  }
  const enc = new TextEncoder();
  const table = (f) => {
    const parts = [];
    const off = new Uint32Array(N + 1);
    let total = 0;
    for (let i = 0; i < N; i++) {
      const b = enc.encode(f(i));
      parts.push(b);
      total += b.length;
      off[i + 1] = total;
    }
    const bytes = new Uint8Array(total);
    parts.forEach((p, i) => bytes.set(p, off[i]));
    return { offsets: off, bytes };
  };
  return {
    graph: { offsets, deps },
    names: table((i) => `step-${i}`),
    attrs: table((i) => `{"i":${i},"lr":0.001,"tag":"layer-${Math.floor(i / WIDTH)}"}`),
  };
}

function time(fn, runs = RUNS) {
  fn(); // warm-up
  const ms = [];
  for (let k = 0; k < runs; k++) {
    const t = performance.now();
    fn();
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  return { median: ms[Math.floor(ms.length / 2)], min: ms[0] };
}

const js = await loadJsFallback();
await js.xxh64Ready;
const xxhash = (await import(require.resolve('xxhash-wasm', { paths: [root] }).replace(/cjs\/xxhash-wasm\.cjs$/, 'esm/xxhash-wasm.js'))).default;
const wasm = await xxhash();

console.log(`generating layered DAG: ${N.toLocaleString()} nodes, width ${WIDTH}, ${DEPS} deps per node…`);
const { graph, names, attrs } = layeredDag();
console.log(`  ${graph.deps.length.toLocaleString()} edges; ${process.version}; ${RUNS} runs, median (min)`);
console.log(`  load average ${loadavg()[0].toFixed(1)} on ${cpus().length} CPUs${loadavg()[0] > cpus().length / 2 ? ' (busy machine: trust min over median)' : ''}\n`);

// Sanity: both sides agree on this graph before timing it.
const nf = nb.fingerprintAll(graph.offsets, graph.deps, names.offsets, names.bytes, attrs.offsets, attrs.bytes);
const jf = js.fingerprintAll(graph, names, attrs);
if (!nf.ok || !jf.ok || Buffer.compare(nf.hex, jf.hex) !== 0) throw new Error('native and JS fingerprints differ');

const roots = Uint32Array.from({ length: WIDTH }, (_, i) => N - WIDTH + i);
const rows = [];
const fmt = (t) => `${t.median.toFixed(1)} (${t.min.toFixed(1)})`;
/** `a` and `b` timed in alternation, so that a busy spell of the machine hits both alike. */
function timeBoth(a, b, runs = RUNS) {
  a();
  b();
  const [ta, tb] = [[], []];
  for (let k = 0; k < runs; k++) {
    for (const [fn, into] of k % 2 ? [[b, tb], [a, ta]] : [[a, ta], [b, tb]]) {
      const t = performance.now();
      fn();
      into.push(performance.now() - t);
    }
  }
  const stats = (ms) => (ms.sort((x, y) => x - y), { median: ms[Math.floor(ms.length / 2)], min: ms[0] });
  return [stats(ta), stats(tb)];
}

/** One row: `run(b)` timed with this build, the `--compare` build if any, and the fallback. */
function row(name, run, jsT, target) {
  const [nat, old] = ob ? timeBoth(() => run(nb), () => run(ob)) : [time(() => run(nb)), null];
  rows.push({
    op: name,
    native: fmt(nat),
    ...(old ? { compared: fmt(old), 'native/compared (min)': `${((nat.min / old.min - 1) * 100).toFixed(1)} %` } : {}),
    js: jsT ? fmt(jsT) : '-',
    'js/native (min)': jsT ? `${(jsT.min / nat.min).toFixed(1)}x` : '-',
    target: target ? `<= ${target} ms: ${nat.min <= target ? 'ok' : 'MISSED'} (min)` : '',
  });
}
row('toposort', (b) => b.toposort(graph.offsets, graph.deps), time(() => js.toposort(graph)), 50);
row(
  'expand (all nodes)',
  (b) => b.expand(graph.offsets, graph.deps, roots, new Uint8Array(N), new Uint8Array(N)),
  time(() => js.expand(graph, roots, new Uint8Array(N), new Uint8Array(N))),
);
row(
  'fingerprintAll',
  (b) => b.fingerprintAll(graph.offsets, graph.deps, names.offsets, names.bytes, attrs.offsets, attrs.bytes),
  time(() => js.fingerprintAll(graph, names, attrs), Math.min(RUNS, 3)),
  500,
);
// The cost of crossing the boundary: many calls that each do almost nothing.
const short = Array.from({ length: CALLS }, (_, i) => `step-${i}`);
row(`xxh64Hex × ${CALLS.toLocaleString()} short strings`, (b) => {
  for (const s of short) b.xxh64Hex(s);
});
const tiny = { offsets: Uint32Array.of(0, 0, 1), deps: Uint32Array.of(0) };
row(`toposort × ${CALLS.toLocaleString()} 2-node graphs`, (b) => {
  for (let i = 0; i < CALLS; i++) b.toposort(tiny.offsets, tiny.deps);
});
console.log(`graph (ms)${ob ? `; compared: ${compareWith}` : ''}`);
console.table(rows);

const data = new Uint8Array(HASH_MIB << 20);
for (let i = 0; i < data.length; i++) data[i] = (i * 31 + 7) & 0xff;
const gbps = (t) => `${((HASH_MIB / 1024) / (t.median / 1000)).toFixed(2)} GiB/s`;
const hashRows = [
  ...(ob
    ? timeBoth(() => nb.xxh64(data), () => ob.xxh64(data)).map((t, i) => [i ? 'compared xxh64' : 'native xxh64', t])
    : [['native xxh64', time(() => nb.xxh64(data))]]),
  ['xxhash-wasm h64Raw', time(() => wasm.h64Raw(data))],
  ['pure TS xxh64', time(() => js.xxh64Pure(data), 3)],
  ['node:crypto sha256', time(() => createHash('sha256').update(data).digest())],
].map(([name, t]) => ({ hash: name, ms: fmt(t), throughput: gbps(t) }));
console.log(`\nhashing ${HASH_MIB} MiB (ms)`);
console.table(hashRows);
