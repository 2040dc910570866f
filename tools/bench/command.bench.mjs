// Benchmark: the per-step overhead of a command step that runs `true`, each beside its floor in
// one run (issue 29):
//   local  a StepRunner running N command steps (inline executor, local store in a temp dir)
//          against N bare `child_process.spawn('true')`, one at a time and 8 at once.
//          Target: ≤ 1.3× the bare spawn.
//   ssh    the SSH executor running N command steps on a real sshd (loopback), one at a time,
//          against N bare `exec('true')` on one kept-open ssh2 connection. Target: ≤ 1.5×.
// Reports ms/step and the ratios. Needs root and openssh-server for the SSH rows
// (tools/testenv/install-ssh.sh), and built @cairn/core, @cairn/runner, @cairn/remote-ssh
// (`npx nx run-many -t build`).
// The SSH executor keeps its default poll interval (1000 ms; POLL_MS=… to change it): a short
// step ends within its launch exec, whatever the interval.
// --cpu times this process's CPU time (user + system) instead of wall time: what the runner
// itself spends per step, beside what a bare spawn costs its parent (the programs' own CPU is in
// neither); on a shared machine the wall clock counts the other processes' turns.
// The local store and the context files go to the OS temp dir: TMPDIR=/dev/shm times the runner
// without the disk (on an ext4 mounted with `discard`, a step's ~10 directory creations and
// removals cost more than its spawn).
//   node tools/bench/command.bench.mjs [steps=200] [--local-only | --ssh-only] [--rounds N] [--cpu]
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { command, input, lower, makeTask } from '@cairn/core';
import { StepRunner } from '@cairn/runner';

const root = fileURLToPath(new URL('../..', import.meta.url));
const args = process.argv.slice(2);
const STEPS = Number(args.find((a) => /^\d+$/.test(a)) ?? 200);
const ROUNDS = Number(args[args.indexOf('--rounds') + 1] ?? 0) || 3;
const CPU = args.includes('--cpu');
/** The clock of every row: wall ms, or this process's CPU ms with --cpu. */
const now = CPU
  ? () => {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1000;
    }
  : () => performance.now();
const load = () => `load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const tmp = mkdtempSync(join(tmpdir(), 'cairn-command-bench-'));
chmodSync(tmp, 0o777);
let tag = 0;

/** `n` distinct command steps running `true` (the argument only makes each one its own step). */
const trueSteps = (n) => {
  const t = ++tag;
  return lower(Array.from({ length: n }, (_, i) => command({ name: `true-${t}-${i}`, version: 'v1', program: 'true', args: [input('i')], inputs: { i } })));
};

/** Runs `n` jobs through `one`, `width` at a time; returns ms per job. */
async function paced(n, width, one) {
  let next = 0;
  const t0 = now();
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < n) await one(next++);
  }));
  return (now() - t0) / n;
}

const spawnTrue = () => new Promise((resolve, reject) => spawn('true', [], { stdio: 'ignore' }).on('exit', resolve).on('error', reject));

/** Local rows: the runner against bare spawns, alternating, ROUNDS times. */
async function local(width) {
  const bare = [];
  const runner = [];
  for (let r = 0; r < ROUNDS; r++) {
    bare.push(await paced(STEPS, width, spawnTrue));
    const specs = trueSteps(STEPS);
    const prefix = join(tmp, `store-${tag}`);
    const t0 = now();
    const summary = await new StepRunner({ prefix, maxConcurrent: width, logger: { info() {}, warn() {}, error() {} } }).run(specs, { handleSigint: false });
    runner.push((now() - t0) / STEPS);
    if (summary.counts.succeeded !== STEPS) throw new Error(`local: ${JSON.stringify(summary.counts)}`);
    rmSync(prefix, { recursive: true, force: true });
  }
  report(`local, ${width} at a time`, 'bare spawn(true)', bare, 'StepRunner command step (inline)', runner, 1.3);
}

/** SSH rows: the executor against bare execs on one kept-open connection, alternating, ROUNDS times. */
async function ssh() {
  await build({ entryPoints: [join(root, 'tools/testenv/sshd.ts')], outfile: join(tmp, 'sshd.mjs'), format: 'esm', platform: 'node', logLevel: 'silent' });
  const { startSshd, sshdAvailable } = await import(pathToFileURL(join(tmp, 'sshd.mjs')).href);
  if (!sshdAvailable()) {
    console.error('command.bench: /usr/sbin/sshd is not installed; run tools/testenv/install-ssh.sh (SSH rows skipped)');
    return;
  }
  const { createSshExecutor } = await import('@cairn/remote-ssh');
  const { Client } = await import('ssh2');
  const { readFileSync } = await import('node:fs');
  const s = await startSshd();
  try {
    const conn = new Client();
    await new Promise((resolve, reject) => conn.on('ready', resolve).on('error', reject).connect({ host: s.host, port: s.port, username: s.user, privateKey: readFileSync(s.privateKeyPath) }));
    const execTrue = () => new Promise((resolve, reject) => conn.exec('true', (err, stream) => (err ? reject(err) : stream.on('close', resolve).resume().stderr.resume())));
    const prefix = join(tmp, 'ssh-store');
    mkdirSync(prefix, { mode: 0o777 });
    const waiters = new Map();
    const host = {
      prefix,
      client: undefined,
      logger: { info() {}, warn: (m) => console.warn(m), error: (m) => console.error(m) },
      report(jobId, status) {
        if (['succeeded', 'failed', 'cancelled', 'lost'].includes(status.state)) waiters.get(jobId)?.(status);
      },
    };
    const ex = createSshExecutor({
      hosts: [{ name: 'h', host: s.host, port: s.port, user: s.user, privateKeyPath: s.privateKeyPath, knownHostsPath: s.knownHostsPath, workDir: join(s.workDir, 'cairn'), capacity: { cpus: 4, gpus: [] } }],
      pollIntervalMs: Number(process.env.POLL_MS ?? 1000),
    });
    await ex.start(host);
    const runStep = async (spec) => {
      const outputPath = join(prefix, spec.nameWithHash);
      const attemptDir = join(prefix, '.attempts', spec.nameWithHash);
      mkdirSync(attemptDir, { recursive: true });
      const req = { jobKey: `${spec.nameWithHash}.1`, spec, task: makeTask(spec, { outputPath, depPaths: {}, attempt: 1 }), outputPath, prefix, resources: {}, logPaths: { stdout: join(attemptDir, 'stdout.log'), stderr: join(attemptDir, 'stderr.log') }, attemptDir, signal: new AbortController().signal };
      const done = new Promise((resolve) => waiters.set(req.jobKey, resolve));
      await ex.submit(req);
      const st = await done;
      if (st.state !== 'succeeded') throw new Error(`${req.jobKey}: ${st.state} ${st.error?.message ?? st.reason ?? ''}`);
    };
    await runStep(trueSteps(1)[0]); // the first contact (work dir check) is not per-step overhead
    await execTrue();
    const bare = [];
    const steps = [];
    for (let r = 0; r < ROUNDS; r++) {
      bare.push(await paced(STEPS, 1, execTrue));
      const specs = trueSteps(STEPS);
      steps.push(await paced(STEPS, 1, (i) => runStep(specs[i])));
    }
    report('ssh, one at a time', "bare ssh exec('true'), one connection", bare, `SSH executor command step (pollIntervalMs ${process.env.POLL_MS ?? 1000})`, steps, 1.5);
    await ex.stop();
    conn.end();
  } finally {
    await s.stop();
  }
}

function report(what, floorName, floor, name, ours, target) {
  const ratio = median(ours) / median(floor);
  console.log(`command.bench: ${what}, ${STEPS} steps × ${ROUNDS} rounds (median, ${CPU ? 'CPU time of this process' : 'wall time'}):`);
  console.log(`  ${floorName.padEnd(48)} ${median(floor).toFixed(2)} ms/step  [${floor.map((x) => x.toFixed(2)).join(', ')}]`);
  console.log(`  ${name.padEnd(48)} ${median(ours).toFixed(2)} ms/step  [${ours.map((x) => x.toFixed(2)).join(', ')}]`);
  console.log(`  ratio ×${ratio.toFixed(2)} (target ≤ ${target}) ${ratio <= target ? 'OK' : 'OVER TARGET'}  (${load()})`);
}

try {
  if (!args.includes('--ssh-only')) {
    await local(1);
    await local(8);
  }
  if (!args.includes('--local-only')) await ssh();
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
