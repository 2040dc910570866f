#!/usr/bin/env node
// Cairn's benchmark suite (issue #5). Runs every job of lib/plan.mjs in a fresh child process
// (tools/bench/lib/child.mjs), one at a time, and writes .bench-results/bench.{md,json}.
//
//   npx nx run-many -t build --output-style=static     # the suite imports the BUILT packages
//   npm run bench                                       # full suite (~35 min on 2 cores)
//   node tools/bench/run.mjs --quick                    # small sizes, under a minute (CI smoke check)
//
// Options: --quick, --filter A,B (only rows whose group, implementation or variant contains A or B),
// --runs N (repetitions after warm-up), --warmup N, --out DIR (default .bench-results),
// --tmp DIR (scratch directory of disk cases; default the OS temp dir), --budget SECONDS
// (skip a size whose single repetition is predicted to exceed this; default 30), --cpu (time CPU
// time, user + system, instead of wall time: CAIRN_BENCH_CLOCK=cpu, see lib/timing.mjs).
// Exit status: 0 when every Cairn job succeeded (a peer failing, e.g. a stack overflow at 10^6,
// is reported, not fatal); 1 otherwise.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, loadavg, platform, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makePlan } from './lib/plan.mjs';
import { addRatios, formatMs, formatRate, toMarkdown } from './lib/report.mjs';
import { median } from './lib/timing.mjs';

const require = createRequire(import.meta.url);
const root = fileURLToPath(new URL('../../', import.meta.url));
const childEntry = fileURLToPath(new URL('./lib/child.mjs', import.meta.url));

function parseArgs(argv) {
  const opts = { quick: false, filter: undefined, runs: undefined, warmup: 1, out: join(root, '.bench-results'), tmp: tmpdir(), budget: 30 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--quick') opts.quick = true;
    else if (a === '--filter') opts.filter = val();
    else if (a === '--runs') opts.runs = Number(val());
    else if (a === '--warmup') opts.warmup = Number(val());
    else if (a === '--out') opts.out = val();
    else if (a === '--tmp') opts.tmp = val();
    else if (a === '--budget') opts.budget = Number(val());
    else if (a === '--cpu') process.env.CAIRN_BENCH_CLOCK = 'cpu';
    else if (a === '--help' || a === '-h') {
      console.log('usage: node tools/bench/run.mjs [--quick] [--filter A,B] [--runs N] [--warmup N] [--out DIR] [--tmp DIR] [--budget SECONDS] [--cpu]');
      process.exit(0);
    } else throw new Error(`unknown option ${a} (try --help)`);
  }
  return opts;
}

function checkBuilt() {
  const missing = ['packages/core/dist/index.js', 'packages/runner/dist/index.js'].filter((f) => !existsSync(join(root, f)));
  if (missing.length) {
    console.error(`bench: missing ${missing.join(', ')}; build first: npx nx run-many -t build --output-style=static`);
    process.exit(1);
  }
}

/** Runs one job in a fresh process; resolves with its parsed result or an `error`. */
function runChild(job, { runs, warmup, timeoutMs }) {
  const params = { ...job.params, runs, warmup, cairn: job.backend !== null };
  const env = { ...process.env };
  if (job.backend === 'native') env.CAIRN_NATIVE = '1';
  else if (job.backend === 'js') env.CAIRN_NATIVE = '0';
  else delete env.CAIRN_NATIVE;
  if (job.tmp) env.CAIRN_BENCH_TMP = job.tmp;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--expose-gc', '--max-old-space-size=12288', '--stack-size=984', childEntry, job.case, job.variant, JSON.stringify(params)], {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => {
      if (stderr.length < 64 * 1024) stderr += d;
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const line = stdout.split('\n').find((l) => l.startsWith('BENCH_RESULT '));
      if (line && code === 0) return resolve(JSON.parse(line.slice('BENCH_RESULT '.length)));
      const why = timedOut
        ? `timed out after ${(timeoutMs / 1000).toFixed(0)} s`
        : signal
          ? `killed by ${signal}`
          : (stderr.split('\n').find((l) => /Error|error:/.test(l)) ?? stderr.split('\n').find(Boolean) ?? `exit ${code}`).trim().slice(0, 160);
      resolve({ error: why, stderr });
    });
  });
}

function fmtLine(r) {
  const head = `${r.group} | ${r.impl} | ${r.params.shape} ${r.params.n}`;
  if (r.skipped) return `${head}: skipped (${r.skipped})`;
  if (r.error) return `${head}: FAILED (${r.error})`;
  return `${head}: ${formatMs(r.median)} [${formatMs(r.min)}–${formatMs(r.max)}] ${formatRate(r.rate)}${r.ratio !== undefined ? ` ×${r.ratio.toFixed(2)}` : ''} rss ${(r.maxRssBytes / 2 ** 20).toFixed(0)} MiB`;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  checkBuilt();
  const native = require('@cairn/native');
  const backendInfo = { native: Boolean(native.binding), reason: native.binding ? `loaded ${native.loadedFrom}` : native.loadErrors.map((e) => e.message).join('; ') || 'CAIRN_NATIVE=0' };
  let jobs = makePlan({ quick: opts.quick, disk: opts.tmp });
  if (opts.filter) {
    const terms = opts.filter.split(',').filter(Boolean);
    jobs = jobs.filter((j) => terms.some((t) => `${j.group} ${j.impl} ${j.variant}`.includes(t)));
  }
  // The Python peers' venv (pinned Snakemake and Dask from PyPI), made once: without it their
  // rows are skipped with setup.sh's reason and everything else runs.
  let pythonSkip;
  if (jobs.some((j) => j.case === 'python')) {
    const r = spawnSync('bash', [join(root, 'tools/bench/python/setup.sh')], { encoding: 'utf8' });
    if (r.status !== 0) pythonSkip = `no Python peers: ${(r.stderr.trim().split('\n').pop() || `setup.sh exited ${r.status}`).replace(/^bench python peers: /, '')}`;
    console.log(r.status === 0 ? r.stdout.trim() : pythonSkip);
  }
  const startedAt = new Date().toISOString();
  const loadavgStart = loadavg();
  const t0 = performance.now();
  const cpu = cpus();
  const machine = { clock: process.env.CAIRN_BENCH_CLOCK === 'cpu' ? 'cpu' : 'wall', cpus: cpu.length, cpuModel: cpu[0]?.model ?? 'unknown', memGiB: Math.round(totalmem() / 2 ** 30), node: process.version, platform: `${platform()} ${release()}`, tmp: opts.tmp };
  console.log(`bench: ${opts.quick ? 'quick' : 'full'} mode, ${jobs.length} jobs; ${machine.cpus} × ${machine.cpuModel}; Node ${machine.node}; native ${backendInfo.native ? 'yes' : 'NO'}; load ${loadavgStart.map((x) => x.toFixed(2)).join(' ')}`);

  const results = [];
  const seriesKey = (j) => `${j.group}|${j.impl}|${j.backend}|${j.params.shape}|${j.tmp ?? ''}`;
  const lastOf = new Map(); // series → last result, for predicting the next size
  let cairnFailures = 0;
  for (const job of jobs) {
    const n = job.params.n;
    const runs = opts.runs ?? (opts.quick ? (job.tmp ? 2 : 3) : job.tmp || n >= 1_000_000 ? 3 : 5);
    const warmup = opts.warmup;
    const r = { ...job, runs, warmup, loadavg1: loadavg()[0] };
    if (job.case === 'python' && pythonSkip !== undefined) {
      r.skipped = pythonSkip;
    } else if (job.backend === 'native' && !backendInfo.native) {
      r.skipped = `native module not loaded (${backendInfo.reason})`;
    } else {
      const prev = lastOf.get(seriesKey(job));
      if (prev?.error || prev?.skipped) r.skipped = `skipped: the smaller size (${prev.params.n}) ${prev.error ? 'failed' : 'was skipped'}`;
      else if (prev && prev.median !== undefined && job.backend === null) {
        // Peers only (Cairn rows always run): linear extrapolation of the fastest run, and of the
        // setup (graph build), from the previous size. The fastest run is the least noisy.
        const scale = n / prev.params.n;
        const run = prev.min * scale;
        const setup = prev.setupMs * scale;
        if (run > opts.budget * 1000) r.skipped = `skipped: at n=${prev.params.n} the fastest run took ${formatMs(prev.min)}, so n=${n} would take ~${formatMs(run)} (> ${opts.budget} s)`;
        else if (setup > 2 * opts.budget * 1000) r.skipped = `skipped: at n=${prev.params.n} building the graph took ${formatMs(prev.setupMs)}, so n=${n} would take ~${formatMs(setup)}`;
      }
    }
    if (!r.skipped) {
      const timeoutMs = (opts.quick ? 60 : 300) * 1000;
      const out = await runChild(job, { runs, warmup, timeoutMs });
      if (out.error) {
        r.error = out.error;
        if (job.backend !== null) {
          cairnFailures++;
          process.stderr.write(out.stderr.slice(-4000));
        }
      } else {
        r.samples = out.samples;
        r.median = median(out.samples);
        r.min = Math.min(...out.samples);
        r.max = Math.max(...out.samples);
        r.rate = n / (r.median / 1000);
        r.setupMs = out.setupMs;
        r.metrics = out.metrics;
        r.maxRssBytes = out.maxRssBytes;
        r.baseRssBytes = out.baseRssBytes;
        r.bytesPerStep = Math.max(0, out.maxRssBytes - out.baseRssBytes) / n;
        r.backendReason = out.backend?.reason;
        if (job.backend !== null && out.backend?.kind !== job.backend) {
          r.error = `expected backend ${job.backend}, got ${out.backend?.kind}`;
          cairnFailures++;
        }
        const m = out.metrics ?? {};
        const notes = [];
        if (m.bytes !== undefined) notes.push(`${(m.bytes / 2 ** 20).toFixed(1)} MiB encoded (${Math.round(m.bytes / n)} B/step)`);
        if (m.buildMs !== undefined) notes.push(`graph build ${formatMs(m.buildMs)} (untimed)`);
        if (m.handleBuildMs !== undefined) notes.push(`apply() handles built in ${formatMs(m.handleBuildMs)} (untimed)`);
        if (m.concurrency !== undefined) notes.push(`${m.concurrency} in flight`);
        if (m.pairedRatio !== undefined) notes.push(`floor in the same repetitions ${formatMs(m.pairedFloorMs)}; median ratio ×${m.pairedRatio.toFixed(2)}`);
        if (notes.length) r.metricsNote = notes.join(', ');
      }
    }
    lastOf.set(seriesKey(job), r);
    results.push(r);
    addRatios(results);
    console.log(`  ${fmtLine(r)}`);
  }
  addRatios(results);

  const doc = {
    mode: opts.quick ? 'quick' : 'full',
    startedAt,
    durationMs: performance.now() - t0,
    machine,
    backend: backendInfo,
    loadavgStart,
    loadavgEnd: loadavg(),
    warmup: opts.warmup,
    budgetSeconds: opts.budget,
    sizes: [...new Set(results.map((r) => r.params.n))].sort((a, b) => a - b),
    results,
  };
  mkdirSync(opts.out, { recursive: true });
  writeFileSync(join(opts.out, 'bench.json'), `${JSON.stringify(doc, null, 2)}\n`);
  writeFileSync(join(opts.out, 'bench.md'), toMarkdown(doc));
  console.log(`bench: wrote ${join(opts.out, 'bench.md')} and bench.json in ${(doc.durationMs / 1000).toFixed(0)} s${cairnFailures ? `; ${cairnFailures} Cairn job(s) FAILED` : ''}`);
  process.exit(cairnFailures ? 1 : 0);
}

await main();
