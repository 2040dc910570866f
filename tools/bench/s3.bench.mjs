// Benchmark: the S3 store against a real Ceph RADOS Gateway on loopback (tools/testenv/rgw.ts).
//
//   1. requests per cold no-op step (target ≤ 5, the lease included) and per warm step (target
//      well under 1: batched LISTs), counted per operation by the store's request counter;
//   2. a cold run of COLD no-op steps at concurrency 64, next to a floor that does by hand, with
//      the same SDK client settings and concurrency, the fewest requests a leased step can cost:
//      one LIST of the prefix (the cache check), then per step PUT lease (If-None-Match: *),
//      PUT record, PUT status, DELETE lease (target: Cairn within 1.3× of the floor), in ROUNDS
//      pairs (floor, then Cairn) whose ratios' median is reported;
//   3. a warm rerun of WARM steps (a cold run first, untimed), by the same store and by a fresh
//      store (a new process on the same host), with its request count;
//   4. a warm rerun of lazy (`apply`) steps, whose records the runner reads for drift checks:
//      with this host's record cache, and with an empty one (one GET per record).
// Needs: Ceph (tools/testenv/install-system.sh), built @cairn/core, @cairn/runner, @cairn/store-s3.
//   node tools/bench/s3.bench.mjs [--cold 2000] [--warm 10000] [--lazy 2000] [--concurrency 64] [--rounds 3] [--quick]
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import { DeleteObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { apply, StepSpec } from '@cairn/core';
import { StepRunner } from '@cairn/runner';
import { diffCounts, RequestCounter, s3StoreFactory, S3Store } from '@cairn/store-s3';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
process.env.AWS_EC2_METADATA_DISABLED = 'true';
const root = fileURLToPath(new URL('../..', import.meta.url));
const { values } = parseArgs({
  options: {
    cold: { type: 'string', default: '2000' },
    warm: { type: 'string', default: '10000' },
    lazy: { type: 'string', default: '2000' },
    concurrency: { type: 'string', default: '64' },
    rounds: { type: 'string', default: '3' },
    quick: { type: 'boolean', default: false },
  },
});
const COLD = values.quick ? 300 : Number(values.cold);
const WARM = values.quick ? 1000 : Number(values.warm);
const LAZY = values.quick ? 300 : Number(values.lazy);
const C = Number(values.concurrency);
const ROUNDS = values.quick ? 1 : Number(values.rounds);
const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');
const quiet = { info() {}, warn: (m) => console.warn(m), error: (m) => console.error(m) };

// The gateway harness is TypeScript (shared with the tests): compile it next to node_modules.
const cache = join(root, 'node_modules', '.cache', 'cairn-bench');
mkdirSync(cache, { recursive: true });
await build({ entryPoints: [join(root, 'tools/testenv/rgw.ts')], outfile: join(cache, 'rgw.mjs'), format: 'esm', platform: 'node', packages: 'external', logLevel: 'silent' });
const { startRgw, missingRgwBinaries } = await import(pathToFileURL(join(cache, 'rgw.mjs')).href);
if (missingRgwBinaries().length > 0) {
  console.error(`s3.bench: Ceph is missing (${missingRgwBinaries().join(', ')}); run tools/testenv/install-system.sh`);
  process.exit(1);
}

const rgw = await startRgw();
const hostCache = mkdtempSync(join(tmpdir(), 'cairn-s3-bench-cache-'));
const options = (extra = {}) => ({
  endpoint: rgw.endpoint,
  region: rgw.region,
  credentials: { accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey },
  cacheDir: false,
  ...extra,
});
const rows = [];
const row = (what, steps, ms, counts, note = '') => {
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  rows.push({ what, steps, ms: Math.round(ms), stepsPerS: Math.round((steps / ms) * 1000), requests: total, perStep: +(total / steps).toFixed(3), counts, note });
  console.log(`${what}: ${steps} steps in ${ms.toFixed(0)} ms, ${total} requests (${(total / steps).toFixed(3)}/step) ${JSON.stringify(counts)} ${note}`);
};

const noop = () => undefined;
const pathSteps = (n, tag) => Array.from({ length: n }, (_, i) => new StepSpec({ name: `s${i}`, fn: noop, hashAttrs: { i, tag } }));

/** A cold run of fresh path steps; returns the store it used. */
async function coldRun(n, tag, label) {
  const prefix = `s3://${rgw.bucket}/${tag}`;
  // The store as users get it: picked by the prefix's scheme.
  const runner = new StepRunner({ prefix, stores: [s3StoreFactory(options())], maxConcurrent: C, logger: quiet });
  const store = runner.store;
  await store.checkWritable(prefix); // the probe, once per run: counted apart from the steps
  const before = store.s3.counter.counts();
  const t0 = performance.now();
  const summary = await runner.run(pathSteps(n, tag));
  const ms = performance.now() - t0;
  if (summary.counts.succeeded !== n) throw new Error(`cold run: ${JSON.stringify(summary.counts)}`);
  if (label) row(label, n, ms, diffCounts(store.s3.counter.counts(), before), `concurrency ${C}`);
  return { store, prefix, ms };
}

/** The floor: the fewest requests a leased cold step costs, by hand, same client settings, same concurrency. */
async function floor(n, tag) {
  const counter = new RequestCounter();
  const client = new S3Client({ endpoint: rgw.endpoint, region: rgw.region, forcePathStyle: true, credentials: { accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey }, requestChecksumCalculation: 'WHEN_REQUIRED', requestHandler: { httpAgent: { keepAlive: true, maxSockets: 128 } } });
  counter.attach(client);
  const B = rgw.bucket;
  const lease = JSON.stringify({ worker_id: 'bench-1-run', timestamp: Date.now() / 1000, host: 'bench', pid: 1, processStartTime: null, runId: 'run', token: 'run.1' });
  const record = `${JSON.stringify({ cairn: 1, name: 'n', nameWithHash: 'n-0123456789abcdef', outputPath: 's3://x', config: {}, deps: [], depPaths: [], status: 'SUCCESS', attempts: [], timings: { start: 0, end: 0, durationMs: 0 }, executor: 'inline', runId: 'run' }, null, 2)}\n`;
  const t0 = performance.now();
  await client.send(new ListObjectsV2Command({ Bucket: B, Prefix: `${tag}/` }));
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const dir = `${tag}/s${next++}-0123456789abcdef/`;
      await client.send(new PutObjectCommand({ Bucket: B, Key: `${dir}.executor_status.lock`, Body: lease, IfNoneMatch: '*' }));
      await client.send(new PutObjectCommand({ Bucket: B, Key: `${dir}.artifact.json`, Body: record }));
      await client.send(new PutObjectCommand({ Bucket: B, Key: `${dir}.executor_status`, Body: 'SUCCESS' }));
      await client.send(new DeleteObjectCommand({ Bucket: B, Key: `${dir}.executor_status.lock` }));
    }
  };
  await Promise.all(Array.from({ length: C }, worker));
  const ms = performance.now() - t0;
  client.destroy();
  row('floor: the same steps by hand (SDK)', n, ms, counter.counts(), `concurrency ${C}`);
  return ms;
}

async function warmRun(prefix, n, tag, store, label) {
  const runner = new StepRunner({ prefix, store, maxConcurrent: C, logger: quiet });
  const before = store.s3.counter.counts();
  const t0 = performance.now();
  const summary = await runner.run(pathSteps(n, tag));
  const ms = performance.now() - t0;
  if (summary.counts.cached !== n) throw new Error(`warm run: ${JSON.stringify(summary.counts)}`);
  row(label, n, ms, diffCounts(store.s3.counter.counts(), before));
}

console.log(`s3.bench: gateway ${rgw.endpoint}, load ${load()}`);
try {
  // 1–2. Cold runs next to the floor, in ROUNDS pairs (floor, then Cairn): the machine's load
  // changes by the minute (other work shares its two cores with the gateway), so each pair is
  // compared, and the median of the pairs' ratios is reported with the best-to-best ratio.
  const ratios = [];
  const colds = [];
  const floors = [];
  let cold;
  for (let r = 0; r < ROUNDS; r++) {
    const f = await floor(COLD, `floor-${r}`);
    const c = await coldRun(COLD, `cold-${r}`, 'Cairn cold run (S3Store + StepRunner, no-op steps)');
    console.log(`round ${r + 1}: cold / floor ${(c.ms / f).toFixed(2)}× (load ${load()})`);
    ratios.push(c.ms / f);
    floors.push(f);
    colds.push(c.ms);
    if (cold === undefined) cold = c;
    else c.store.s3.destroy();
  }
  const median = [...ratios].sort((a, b) => a - b)[Math.floor(ratios.length / 2)];
  const best = Math.min(...colds) / Math.min(...floors);
  console.log(`cold run / floor: median of ${ROUNDS} pairs ${median.toFixed(2)}× (${ratios.map((x) => x.toFixed(2)).join(', ')}); best / best ${best.toFixed(2)}×`);
  rows.push({ what: `cold / floor, median of ${ROUNDS} pairs (${ratios.map((x) => x.toFixed(2)).join(', ')})`, ratio: +median.toFixed(2) });
  rows.push({ what: 'cold / floor, best Cairn run / best floor run', ratio: +best.toFixed(2) });
  // Warm rerun of the first cold run's steps.
  await warmRun(cold.prefix, COLD, 'cold-0', cold.store, 'warm rerun, same store');
  cold.store.s3.destroy();

  // 3. Warm rerun of WARM steps.
  const big = await coldRun(WARM, 'warm', `cold run of ${WARM} (setup of the warm rerun)`);
  await warmRun(big.prefix, WARM, 'warm', big.store, `warm rerun of ${WARM}, same store`);
  const fresh = new S3Store(options());
  await warmRun(big.prefix, WARM, 'warm', fresh, `warm rerun of ${WARM}, fresh store (a new process)`);
  big.store.s3.destroy();
  fresh.s3.destroy();

  // 4. Lazy steps: the runner reads their records (drift checks).
  const lazy = (n) => Array.from({ length: n }, (_, i) => apply({ name: `lazy${i}`, version: '1', fn: noop, inputs: { i } }));
  const lazyPrefix = `s3://${rgw.bucket}/lazy`;
  const writer = new S3Store(options({ cacheDir: hostCache }));
  await new StepRunner({ prefix: lazyPrefix, store: writer, maxConcurrent: C, logger: quiet }).run(lazy(LAZY));
  writer.s3.destroy();
  for (const [label, cacheDir] of [
    ['warm rerun of apply steps, this host wrote them (disk record cache)', hostCache],
    ['warm rerun of apply steps, another host (empty record cache)', false],
  ]) {
    const store = new S3Store(options({ cacheDir }));
    const t0 = performance.now();
    const summary = await new StepRunner({ prefix: lazyPrefix, store, maxConcurrent: C, logger: quiet }).run(lazy(LAZY));
    if (summary.counts.cached !== LAZY) throw new Error(`lazy warm run: ${JSON.stringify(summary.counts)}`);
    row(label, LAZY, performance.now() - t0, store.s3.counter.counts());
    store.s3.destroy();
  }
} finally {
  await rgw.stop();
  rmSync(hostCache, { recursive: true, force: true });
}
console.log(`load at end ${load()}`);

const md = [
  '| what | steps | ms | steps/s | requests | requests/step | by operation |',
  '|---|---:|---:|---:|---:|---:|---|',
  ...rows.filter((r) => r.steps).map((r) => `| ${r.what} | ${r.steps} | ${r.ms} | ${r.stepsPerS} | ${r.requests} | ${r.perStep} | ${Object.entries(r.counts).map(([k, v]) => `${k} ${v}`).join(', ')} |`),
  ...rows.filter((r) => r.ratio).map((r) => `| **${r.what}** | | | | | | **${r.ratio}×** |`),
].join('\n');
console.log(`\n${md}`);
const out = join(root, '.bench-results');
mkdirSync(out, { recursive: true });
writeFileSync(join(out, 's3.json'), JSON.stringify({ when: new Date().toISOString(), node: process.version, concurrency: C, rows }, null, 2));
writeFileSync(join(out, 's3.md'), `${md}\n`);
