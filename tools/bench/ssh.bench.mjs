// Benchmark: 200 tiny steps across 2 real sshd hosts (loopback), 8 at once (4 cpus each).
// Reports wall time per step, amortised. Target: ≤ 30 ms/step, for the default configuration
// (`worker: 'auto'`: tiny steps run in each host's persistent worker). For comparison it then runs
// the same steps with `worker: 'never'` (a detached node process per step); `--default-only` skips that.
// Needs: root, openssh-server (tools/testenv/install-ssh.sh), built @cairn/core, @cairn/runner
// and @cairn/remote-ssh (`npx nx run-many -t build`).
//   node tools/bench/ssh.bench.mjs [steps=200] [--default-only]
import { mkdirSync, mkdtempSync, chmodSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { makeTask, StepSpec } from '@cairn/core';
import { createSshExecutor } from '@cairn/remote-ssh';

const root = fileURLToPath(new URL('../..', import.meta.url));
const args = process.argv.slice(2);
const STEPS = Number(args.find((a) => /^\d+$/.test(a)) ?? 200);
const load = () => `load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`;

// The sshd harness is TypeScript (shared with the tests): compile it once to a temp module.
const tmp = mkdtempSync(join(tmpdir(), 'cairn-ssh-bench-'));
chmodSync(tmp, 0o777);
await build({ entryPoints: [join(root, 'tools/testenv/sshd.ts')], outfile: join(tmp, 'sshd.mjs'), format: 'esm', platform: 'node', logLevel: 'silent' });
const { startSshd, sshdAvailable } = await import(pathToFileURL(join(tmp, 'sshd.mjs')).href);
if (!sshdAvailable()) {
  console.error('ssh.bench: /usr/sbin/sshd is not installed; run tools/testenv/install-ssh.sh');
  process.exit(1);
}

const servers = await Promise.all([startSshd(), startSshd()]);
const hosts = servers.map((s, i) => ({
  name: `h${i}`,
  host: s.host,
  port: s.port,
  user: s.user,
  privateKeyPath: s.privateKeyPath,
  knownHostsPath: s.knownHostsPath,
  workDir: join(s.workDir, 'cairn'),
  capacity: { cpus: 4, gpus: [] },
  nodePath: process.execPath,
}));
const fixture = pathToFileURL(join(root, 'packages/remote-ssh/test/fixtures/steps.mjs')).href;
const prefix = join(tmp, 'store');
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
const request = (i, tag) => {
  const spec = new StepSpec({ name: `tiny-${i}`, hashAttrs: { i, tag }, ref: { module: fixture, export: 'tiny' } });
  const outputPath = join(prefix, spec.nameWithHash);
  const attemptDir = join(prefix, '.attempts', spec.nameWithHash);
  mkdirSync(attemptDir, { recursive: true });
  return {
    jobKey: `${spec.nameWithHash}.1`,
    spec,
    task: makeTask(spec, { outputPath, depPaths: {}, attempt: 1 }),
    outputPath,
    prefix,
    resources: {},
    logPaths: { stdout: join(attemptDir, 'stdout.log'), stderr: join(attemptDir, 'stderr.log') },
    attemptDir,
    signal: new AbortController().signal,
  };
};
const runOne = async (ex, req) => {
  const done = new Promise((resolve) => waiters.set(req.jobKey, resolve));
  await ex.submit(req);
  const st = await done;
  if (st.state !== 'succeeded') throw new Error(`${req.jobKey}: ${st.state} ${st.error?.message ?? st.reason ?? ''}`);
};

// Floor on this machine: the same worker process started locally, 8 at once, without SSH.
const { spawn } = await import('node:child_process');
const { createRequire } = await import('node:module');
const entry = join(createRequire(import.meta.url).resolve('@cairn/runner/package.json'), '..', 'dist', 'worker-entry.js');
const spawnOnce = () => new Promise((resolve) => spawn(process.execPath, [entry], { stdio: 'ignore' }).on('exit', resolve));
{
  const t0 = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (next++ < STEPS) await spawnOnce();
  }));
  console.log(`ssh.bench: floor (local node worker-entry spawn, ${STEPS}x, 8 at once, no SSH): ${((performance.now() - t0) / STEPS).toFixed(1)} ms/step (${load()})`);
}

/** One executor configuration: `worker` undefined = the default a user gets. */
async function measure(worker) {
  const label = worker === undefined ? "default (worker: 'auto')" : `worker: '${worker}'`;
  const ex = createSshExecutor({ hosts, pollIntervalMs: 20, ...(worker === undefined ? {} : { worker }) });
  let t = performance.now();
  await ex.start(host);
  const connectMs = performance.now() - t;
  t = performance.now();
  await runOne(ex, request(-1, label)); // bundles and uploads the code (and starts the worker) for the first host
  const firstMs = performance.now() - t;
  const reqs = Array.from({ length: STEPS }, (_, i) => request(i, label));
  t = performance.now();
  await Promise.all(reqs.map((r) => runOne(ex, r)));
  const wall = performance.now() - t;
  await ex.stop();
  const perStep = wall / STEPS;
  console.log(`ssh.bench: ${label}: connect 2 hosts ${connectMs.toFixed(0)} ms; first step (bundle + upload${worker === 'never' ? '' : ' + worker start'}) ${firstMs.toFixed(0)} ms`);
  console.log(`ssh.bench: ${label}: ${STEPS} tiny steps, 2 hosts, concurrency 8: ${wall.toFixed(0)} ms total, ${perStep.toFixed(1)} ms/step (target ≤ 30) ${perStep <= 30 ? 'OK' : 'OVER TARGET'} (${load()})`);
}

try {
  await measure(undefined);
  if (!args.includes('--default-only')) await measure('never');
} finally {
  await Promise.all(servers.map((s) => s.stop()));
  rmSync(tmp, { recursive: true, force: true });
}
