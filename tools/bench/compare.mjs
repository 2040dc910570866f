#!/usr/bin/env node
// Side by side: the same benchmark jobs on this checkout and on another one (typically the commit
// before a change, checked out with `git worktree add --detach ../base <commit>` and built), in one
// run, alternating repetition by repetition so that a machine whose speed drifts moves both alike.
// Each repetition is a fresh child process of the checkout's own tools/bench/lib/child.mjs, which
// imports that checkout's built packages.
//
//   node tools/bench/compare.mjs --base ../base [--rounds 5] [--jobs NAME,NAME] [--tmp DIR] [--cpu]
//
// --cpu times CPU time instead of wall time (CAIRN_BENCH_CLOCK=cpu, lib/timing.mjs): on a machine
// shared with other work, the only clock that does not count the others' turns on the cores.
//
// Prints one line per job: both medians (of each round's median), the per-round ratio's median
// (this checkout ÷ base), and the spread. Jobs are listed in JOBS below.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from './lib/timing.mjs';

const here = fileURLToPath(new URL('../../', import.meta.url));
const K = 1000;

/** Name → [case, variant, params]: the rows the runner-core issue keeps. */
const JOBS = {
  'scheduler-100k': ['runner', 'memory', { shape: 'layered', n: 100 * K, runs: 3 }],
  // The first run of a fresh process, as every `cairn run` is: no warm-up, one sample per round.
  'scheduler-100k-first': ['runner', 'memory', { shape: 'layered', n: 100 * K, warmup: 0, runs: 1 }],
  'scheduler-100k-prehashed': ['runner', 'memory', { shape: 'layered', n: 100 * K, prehash: true, runs: 3 }],
  'chain-10k': ['runner', 'memory', { shape: 'chain', n: 10 * K, targets: 'sinks', runs: 5 }],
  'chain-10k-first': ['runner', 'memory', { shape: 'chain', n: 10 * K, targets: 'sinks', warmup: 0, runs: 1 }],
  'cold-paired-3k': ['runner', 'cold-paired', { shape: 'layered', n: 3 * K, runs: 3 }],
  // 100k steps cold, no floor: with --tmp /dev/shm, the runner's CPU per step where the disk costs least.
  'cold-100k': ['runner', 'cold-disk', { shape: 'layered', n: 100 * K, runs: 1 }],
  'warm-100k': ['runner', 'warm-disk', { shape: 'layered', n: 100 * K, runs: 3 }],
  'warm-100k-sinks': ['runner', 'warm-disk', { shape: 'layered', n: 100 * K, targets: 'sinks', runs: 3 }],
  // warm-100k beside its read floor (the native batch reader alone on every status and record), in the same repetitions.
  'warm-paired-100k': ['runner', 'warm-paired', { shape: 'layered', n: 100 * K, runs: 3 }],
  // Issue 32: handles of one layered graph pulled from a generator, and the same as an array.
  'stream-4k-generator': ['runner', 'stream', { shape: 'layered', n: 4 * K, from: 'generator', runs: 3 }],
  'stream-4k-array': ['runner', 'stream', { shape: 'layered', n: 4 * K, from: 'array', runs: 3 }],
  'stream-100k-generator': ['runner', 'stream', { shape: 'layered', n: 100 * K, from: 'generator', runs: 3 }],
  'stream-100k-array': ['runner', 'stream', { shape: 'layered', n: 100 * K, from: 'array', runs: 3 }],
  // Issue 32's realistic pipeline: lowering included, each step reads its dependencies' files and writes its own (use --tmp /dev/shm).
  'files-10k': ['runner', 'files', { shape: 'layered', n: 10 * K, runs: 3 }],
  // The same, paired with its raw file-operation floor (cases/store.mjs filesFloorSync): ratio to the floor in the same run.
  'files-paired-10k': ['runner', 'files-paired', { shape: 'layered', n: 10 * K, runs: 3 }],
  // Issue 32's lowering rows (native backend: compare.mjs sets CAIRN_NATIVE=1).
  'lower-1m-layered': ['core', 'lower', { shape: 'layered', n: 1000 * K, runs: 3 }],
  'lower-1m-chain': ['core', 'lower', { shape: 'chain', n: 1000 * K, runs: 3 }],
  // Issue 32's dry run (the peer, `snakemake -n`, is in run.mjs: cases/python.mjs).
  'plan-10k': ['runner', 'plan', { shape: 'layered', n: 10 * K, runs: 3 }],
  'plan-100k': ['runner', 'plan', { shape: 'layered', n: 100 * K, runs: 3 }],
  // The peer of the scheduler rows (the same code on both sides: a check of the machine's drift).
  'pgraph-100k': ['runner', 'p-graph', { shape: 'layered', n: 100 * K, runs: 3 }],
  'pgraph-chain-10k': ['runner', 'p-graph', { shape: 'chain', n: 10 * K, runs: 5 }],
};

function parseArgs(argv) {
  const o = { base: undefined, rounds: 5, jobs: Object.keys(JOBS), tmp: tmpdir(), cpu: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = () => argv[++i];
    if (a === '--base') o.base = resolve(v());
    else if (a === '--rounds') o.rounds = Number(v());
    else if (a === '--jobs') o.jobs = v().split(',');
    else if (a === '--tmp') o.tmp = v();
    else if (a === '--cpu') o.cpu = true;
    else throw new Error(`unknown option ${a}`);
  }
  if (o.base === undefined) throw new Error('--base <other checkout> is required');
  for (const j of o.jobs) if (!(j in JOBS)) throw new Error(`unknown job ${j} (known: ${Object.keys(JOBS).join(', ')})`);
  return o;
}

/** One job in a fresh process of `root`'s bench child; resolves with its samples and metrics. */
function runOnce(root, [caseName, variant, params], tmp, cpu) {
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', '--max-old-space-size=12288', '--stack-size=984', join(root, 'tools/bench/lib/child.mjs'), caseName, variant, JSON.stringify({ ...params, cairn: true })], {
      cwd: root,
      env: { ...process.env, CAIRN_NATIVE: '1', CAIRN_BENCH_TMP: tmp, CAIRN_BENCH_CLOCK: cpu ? 'cpu' : 'wall' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('BENCH_RESULT '));
      if (code !== 0 || line === undefined) reject(new Error(`${root}: ${caseName}/${variant} failed (exit ${code}): ${err.slice(-2000)}`));
      else resolveRun(JSON.parse(line.slice('BENCH_RESULT '.length)));
    });
  });
}

const o = parseArgs(process.argv.slice(2));
for (const root of [here, o.base]) {
  if (!existsSync(join(root, 'packages/runner/dist/index.js'))) throw new Error(`${root} is not built (npx nx run-many -t build)`);
}
console.log(`compare: ${here} vs base ${o.base}, ${o.rounds} rounds, ${o.cpu ? 'CPU time' : 'wall time'}, load ${(await import('node:os')).loadavg().map((x) => x.toFixed(1)).join(' ')}`);
for (const name of o.jobs) {
  const mine = [];
  const base = [];
  const ratios = [];
  const extra = [];
  for (let r = 0; r < o.rounds; r++) {
    // Alternate which goes first: a drifting machine then favours neither.
    const order = r % 2 === 0 ? [here, o.base] : [o.base, here];
    const got = {};
    for (const root of order) got[root] = await runOnce(root, JOBS[name], o.tmp, o.cpu);
    const m = median(got[here].samples);
    const b = median(got[o.base].samples);
    mine.push(m);
    base.push(b);
    ratios.push(m / b);
    if (got[here].metrics?.pairedRatio !== undefined) extra.push(`floor ×${got[here].metrics.pairedRatio.toFixed(2)} (base ×${got[o.base].metrics.pairedRatio.toFixed(2)})`);
  }
  const fmt = (xs) => `${median(xs).toFixed(1)} ms [${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)}]`;
  console.log(`${name}: this ${fmt(mine)}  base ${fmt(base)}  this/base ×${median(ratios).toFixed(3)} [${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}]${extra.length ? `  ${extra.join('; ')}` : ''}`);
}
