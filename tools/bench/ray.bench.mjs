// Benchmark: N tiny steps (default 200) on a real one-host Ray cluster (a head and a worker node,
// tools/testenv/ray.ts), through Cairn's Ray executor, side by side with the same N jobs submitted
// by `ray job submit --no-wait` in a shell loop (then waited for with one list request per second).
// Both ask 1 CPU per job, so Ray runs as many at once either way (4: 2 nodes × 2 CPUs).
// Cairn's steps run through its worker entry (a Node process, as for every apply step); the loop's
// jobs run `node -e 0`. Reported: wall time, Cairn's overhead per step, and Cairn's HTTP requests
// per step (target: ≤ 3, plus one shared status query per interval).
// Needs: .venv-ray (tools/testenv/install-ray.sh) and the built packages (`npx nx run-many -t build`).
//   node tools/bench/ray.bench.mjs [steps=200] [--out DIR]
// Results: the table on stdout and in <out>/ray.md, raw numbers in <out>/ray.json (default .bench-results).
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { StepSpec } from '@cairn/core';
import { StepRunner } from '@cairn/runner';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const args = process.argv.slice(2);
const STEPS = Number(args.find((a) => /^\d+$/.test(a)) ?? 200);
const outIdx = args.indexOf('--out');
const out = outIdx >= 0 ? args[outIdx + 1] : join(root, '.bench-results');
const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');

// The helper finds the venv relative to its own file, which is compiled to a temp directory here.
process.env.CAIRN_RAY_VENV ??= join(root, '.venv-ray');
const tmp = mkdtempSync(join(tmpdir(), 'cairn-ray-bench-'));
await build({ entryPoints: [join(root, 'tools/testenv/ray.ts')], outfile: join(tmp, 'ray.mjs'), format: 'esm', platform: 'node', bundle: true, packages: 'external', logLevel: 'silent' });
const { startRay, missingRay } = await import(pathToFileURL(join(tmp, 'ray.mjs')).href);
const { createRayExecutor } = await import(pathToFileURL(join(root, 'packages/remote-ray/dist/index.js')).href);
if (missingRay()) throw new Error(missingRay());

const steps = pathToFileURL(join(root, 'tools/testenv/grid-steps.mjs')).href;
const specs = () => Array.from({ length: STEPS }, (_, i) => new StepSpec({ name: `tiny-${i}`, executor: 'ray', ref: { module: steps, export: 'tiny' }, hashAttrs: { i }, resources: { cpu: 1 } }));

const cluster = await startRay({ workers: 1 });
const rows = [];
try {
  // Cairn: one StepRunner run of N steps.
  const prefix = join(tmp, 'store');
  mkdirSync(prefix, { recursive: true });
  const ray = createRayExecutor({ address: cluster.address });
  const t0 = performance.now();
  const summary = await new StepRunner({ prefix, executors: [ray], maxConcurrent: 8, logger: { info() {}, warn() {}, error() {} } }).run(specs());
  const cairnMs = performance.now() - t0;
  if (summary.counts.succeeded !== STEPS) throw new Error(`Cairn: ${JSON.stringify(summary.counts)}`);
  rows.push({ impl: 'Cairn Ray executor', ms: cairnMs, requests: ray.stats.requests, statusQueries: ray.stats.statusQueries, submissions: ray.stats.submissions });

  // The shell loop: `ray job submit --no-wait` per job, then wait until every job ended.
  const env = { ...process.env, RAY_USAGE_STATS_ENABLED: '0', RAY_API_SERVER_ADDRESS: cluster.address };
  const script = `for i in $(seq 1 ${STEPS}); do "${cluster.ray}" job submit --no-wait --entrypoint-num-cpus 1 --submission-id loop-$i -- node -e 0 >/dev/null 2>&1 || exit 1; done`;
  const t1 = performance.now();
  await run('bash', ['-c', script], { env, maxBuffer: 1 << 24 });
  for (;;) {
    const jobs = await (await fetch(`${cluster.address}/api/jobs/`)).json();
    const loop = jobs.filter((j) => j.submission_id?.startsWith('loop-'));
    if (loop.length >= STEPS && loop.every((j) => ['SUCCEEDED', 'FAILED', 'STOPPED'].includes(j.status))) break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  rows.push({ impl: '`ray job submit` shell loop', ms: performance.now() - t1 });
} finally {
  await cluster.stop();
  rmSync(tmp, { recursive: true, force: true });
}

const [cairn, loop] = rows;
const perStep = (cairn.ms - loop.ms) / STEPS;
const md = [
  `# Ray: ${STEPS} tiny steps on a one-host Ray (head + 1 worker, 2 CPUs each, Ray 2.60.0)`,
  '',
  `load average at the end: ${load()}`,
  '',
  '| implementation | wall (s) | per step (ms) | HTTP requests | per step | status queries | submissions |',
  '|---|---:|---:|---:|---:|---:|---:|',
  `| ${cairn.impl} | ${(cairn.ms / 1000).toFixed(1)} | ${(cairn.ms / STEPS).toFixed(0)} | ${cairn.requests} | ${(cairn.requests / STEPS).toFixed(2)} | ${cairn.statusQueries} | ${cairn.submissions} |`,
  `| ${loop.impl} | ${(loop.ms / 1000).toFixed(1)} | ${(loop.ms / STEPS).toFixed(0)} | | | | ${STEPS} |`,
  '',
  `Cairn's overhead per step against the loop: ${perStep.toFixed(0)} ms (negative: Cairn is faster). Cairn's requests per step besides the shared status queries: ${((cairn.requests - cairn.statusQueries) / STEPS).toFixed(2)}.`,
].join('\n');
console.log(md);
mkdirSync(out, { recursive: true });
writeFileSync(join(out, 'ray.md'), `${md}\n`);
writeFileSync(join(out, 'ray.json'), JSON.stringify({ steps: STEPS, rows }, null, 2));
