#!/usr/bin/env node
// StepRunner throughput: scheduler overhead (in-memory store), cold and warm runs on local
// disk next to the raw file-operation floor measured by hand in the same process, and chains.
//
//   npx tsup (in packages/core and packages/runner) && node tools/bench/runner.bench.mjs [--nodes 100000] [--width 1000] [--chain 10000] [--memory-only]
//   From sources, no build: node --conditions=@cairn/source --import tsx tools/bench/runner.bench.mjs --memory-only
import * as fs from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { StepSpec } from '@cairn/core';
import { MemoryStore, StepRunner } from '@cairn/runner';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const N = arg('nodes', 100_000);
const WIDTH = arg('width', 1000);
const CHAIN = arg('chain', 10_000);
process.env.CAIRN_PROVENANCE = '0';
const noop = () => undefined;

/** A layered DAG: `width` steps per layer, each depending on two steps of the layer before. */
function layered(n, width, tag) {
  const specs = [];
  for (let i = 0; i < n; i++) {
    const layer = Math.floor(i / width);
    const deps = layer === 0 ? [] : [specs[(layer - 1) * width + (i % width)], specs[(layer - 1) * width + ((i * 7 + 3) % width)]];
    specs.push(new StepSpec({ name: `n${i}`, hashAttrs: { i, tag }, deps: [...new Set(deps)], fn: noop }));
  }
  return specs;
}
function chainOf(n, tag) {
  const specs = [];
  for (let i = 0; i < n; i++) specs.push(new StepSpec({ name: `c${i}`, hashAttrs: { i, tag }, deps: i ? [specs[i - 1]] : [], fn: noop }));
  return specs;
}
const rate = (n, ms) => `${Math.round(n / (ms / 1000)).toLocaleString('en-US')} steps/s`;
async function time(label, n, fn) {
  const t = performance.now();
  const out = await fn();
  const ms = performance.now() - t;
  console.log(`${label.padEnd(58)} ${ms.toFixed(0).padStart(7)} ms   ${rate(n, ms)}`);
  return out;
}
const quiet = { info() {}, warn(m) { console.warn(m); }, error(m) { console.error(m); } };

console.log(`node ${process.version}, ${cpus().length} CPUs, ${cpus()[0]?.model ?? ''}`);
console.log(`layered DAG: ${N} steps, ${WIDTH} per layer, 2 deps each; chain: ${CHAIN}\n`);

// 1. Scheduler overhead with the in-memory store.
{
  const specs = layered(N, WIDTH, 'mem-warmup');
  await new StepRunner({ prefix: '/mem', store: new MemoryStore(), logger: quiet }).run(specs.slice(0, 20_000));
  const dag = layered(N, WIDTH, 'mem');
  const store = new MemoryStore();
  const r = new StepRunner({ prefix: '/mem', store, logger: quiet });
  await time(`memory store, cold, ${N} layered (all listed)`, N, () => r.run(dag));
  await time(`memory store, warm, ${N} layered (all listed)`, N, () => r.run(dag));
  const c = chainOf(CHAIN, 'mem');
  await time(`memory store, cold, ${CHAIN}-chain (terminal listed)`, CHAIN, () => new StepRunner({ prefix: '/mem', store: new MemoryStore(), logger: quiet }).run([c.at(-1)]));
}

// 2. Local disk.
if (process.argv.includes('--memory-only')) process.exit(0);
const base = fs.mkdtempSync(join(tmpdir(), 'cairn-bench-'));
try {
  // The floor: the same file operations per step, by hand, synchronously, no scheduler.
  // Measured before and after the cold run, since a shared disk's speed drifts.
  const rawFloor = (tag) =>
    time(`raw file ops by hand (${tag}, ${N} steps: 9 fs calls each)`, N, () => {
      for (let i = 0; i < N; i++) {
        const d = join(base, `raw-${tag}`, `n${i}-0123456789abcdef`);
        try { fs.readFileSync(join(d, '.executor_status')); } catch {}
        fs.mkdirSync(d, { recursive: true });
        fs.writeFileSync(join(d, '.executor_status.lock'), '{"worker_id":"x","timestamp":1}', { flag: 'wx' });
        try { fs.readFileSync(join(d, '.executor_status')); } catch {}
        fs.writeFileSync(join(d, '.artifact.json.tmp'), '{"cairn":1,"name":"x"}');
        fs.renameSync(join(d, '.artifact.json.tmp'), join(d, '.artifact.json'));
        fs.writeFileSync(join(d, '.executor_status.tmp'), 'SUCCESS');
        fs.renameSync(join(d, '.executor_status.tmp'), join(d, '.executor_status'));
        fs.unlinkSync(join(d, '.executor_status.lock'));
      }
    });
  await rawFloor('before');
  const dag = layered(N, WIDTH, 'disk');
  const prefix = join(base, 'store');
  const r = new StepRunner({ prefix, logger: quiet });
  await time(`local disk, cold, ${N} layered (all listed)`, N, () => r.run(dag));
  await rawFloor('after');
  await time(`raw status reads by hand (${N} readFileSync)`, N, () => {
    for (const s of dag) fs.readFileSync(join(s.outputPath(prefix), '.executor_status'), 'utf8');
  });
  await time(`local disk, warm, ${N} layered (terminal layer listed)`, N, () => r.run(dag.slice(-WIDTH)));
  await time(`local disk, warm, ${N} layered (all listed: every status read)`, N, () => r.run(dag));
  const c = chainOf(CHAIN, 'disk');
  await time(`local disk, cold, ${CHAIN}-chain (terminal listed)`, CHAIN, () => r.run([c.at(-1)]));
  const c1k = chainOf(1000, 'disk1k');
  await time('local disk, cold, 1000-chain', 1000, () => r.run([c1k.at(-1)]));
} finally {
  fs.rmSync(base, { recursive: true, force: true });
}
