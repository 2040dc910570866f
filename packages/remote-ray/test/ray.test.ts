/**
 * The Ray executor against a real one-host Ray cluster (tools/testenv/ray.ts: a head and a worker
 * node advertising 2 GPUs, started from the pinned Ray in .venv-ray). Skipped locally without
 * the venv (run tools/testenv/install-ray.sh); in CI (CI=true) a missing Ray fails.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { localLayout, StepRunner, type ArtifactRecord } from '@cairn/runner';
import { apply } from '@cairn/core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { jobFor, RecordingHost } from '../../../tools/testenv/grid-jobs.js';
import { freePort } from '../../../tools/testenv/ports.js';
import { missingRay, startRay, type RayCluster } from '../../../tools/testenv/ray.js';
import { startRunnerUntilJob } from '../../../tools/testenv/runner-child.js';
import { createRayExecutor, type RayExecutor } from '../src/index.js';
import { exit3, gpuEnv, napStep, pipeline, sleepy } from './fixtures/steps.mjs';
import { commandCases } from './command.cases.js';

const missing = missingRay();
if (missing && process.env.CI) throw new Error(`Ray is required in CI: ${missing}`);
if (missing) console.warn(`Skipping the tests on a real Ray: ${missing}`);
const quiet = { info() {}, warn() {}, error() {} };

let cluster: RayCluster;
const root = mkdtempSync(join(tmpdir(), 'cairn-ray-test-'));

const ray = (extra: Parameters<typeof createRayExecutor>[0] = {}): RayExecutor => createRayExecutor({ address: cluster.address, pollIntervalMs: 300, ...extra });

/** Every job the cluster knows (the Jobs API's list). */
async function listJobs(): Promise<{ submission_id: string; status: string; metadata?: Record<string, string> | null }[]> {
  const res = await fetch(`${cluster.address}/api/jobs/`);
  return (await res.json()) as { submission_id: string; status: string }[];
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe.skipIf(missing !== undefined)('the Ray executor on a real Ray cluster', () => {
  beforeAll(async () => {
    cluster = await startRay({ workers: 1, workerGpus: 2 });
  }, 150_000);
  afterAll(async () => {
    await cluster?.stop();
    rmSync(root, { recursive: true, force: true });
  }, 90_000);

  test('a pipeline of local and Ray apply steps runs, then reruns fully cached', async () => {
    const prefix = join(root, 'pipeline');
    const first = ray();
    const summary = await new StepRunner({ prefix, executors: [first], logger: quiet }).run([pipeline()]);
    expect(summary.counts).toEqual({ succeeded: 4 });
    const joinPath = pipeline().lower().outputPath(prefix);
    const text = readFileSync(join(joinPath, 'data.txt'), 'utf8');
    expect(text).toMatch(/^seed@local>left@cairn-left-\S+\.1\+seed@local>right@cairn-right-\S+\.1>join@cairn-join-\S+\.1\n$/);
    expect(first.stats.submissions).toBe(3);
    const ids = (await listJobs()).map((j) => j.submission_id).filter((id) => /^cairn-(left|right|join)-/.test(id));
    expect(ids).toHaveLength(3);

    const second = ray();
    const again = await new StepRunner({ prefix, executors: [second], logger: quiet }).run([pipeline()]);
    expect(again.counts).toEqual({ cached: 1 });
    expect(second.stats.submissions).toBe(0);
  }, 120_000);

  test("a failing step's exit code and the tail of its stderr are reported", async () => {
    const prefix = join(root, 'fail');
    const step = apply({ name: 'fails', fn: exit3, version: 'v1', executor: 'ray', retries: 0, inputs: {} });
    await expect(new StepRunner({ prefix, executors: [ray()], logger: quiet }).run([step])).rejects.toThrow(/exited with code 3/);
    const record = JSON.parse(readFileSync(join(step.lower().outputPath(prefix), '.artifact.json'), 'utf8')) as ArtifactRecord;
    const text = JSON.stringify(record);
    expect(text).toContain('exited with code 3');
    expect(text).toContain('disk on fire');
  }, 90_000);

  test('a Ray node without Node.js fails the step saying so, with exit code 127', async () => {
    const prefix = join(root, 'no-node');
    const step = apply({ name: 'nonode', fn: gpuEnv, version: 'v1', executor: 'ray', retries: 0, inputs: {} });
    const executor = ray({ nodePath: '/nonexistent/bin/node' });
    await expect(new StepRunner({ prefix, executors: [executor], logger: quiet }).run([step])).rejects.toThrow(/exited with code 127[\s\S]*no Node\.js \(\/nonexistent\/bin\/node\) on Ray node/);
  }, 90_000);

  test('`ray job stop` from outside is reported as cancelled (STOPPED) by the next status check', async () => {
    const host = new RecordingHost(join(root, 'stop', 'store'));
    const executor = ray();
    await executor.start(host);
    try {
      const job = jobFor(join(root, 'stop'), 'sleepy');
      const handle = await executor.submit(job);
      const id = String(handle.info.submissionId);
      await host.running(job.jobKey, 60_000);
      await waitFor('the step to start', async () => (existsSync(join(job.outputPath, 'started.txt')) ? true : undefined));
      const before = executor.stats.statusQueries;
      execFileSync(cluster.ray, ['job', 'stop', '--address', cluster.address, id], { env: { ...process.env, RAY_USAGE_STATS_ENABLED: '0' }, stdio: 'pipe' });
      const status = await host.final(job.jobKey, 30_000);
      expect(status).toMatchObject({ state: 'cancelled', reason: 'STOPPED' });
      // The stop had ended the job before the command returned, so the first check after it saw it.
      expect(executor.stats.statusQueries - before).toBe(1);
    } finally {
      await executor.stop();
    }
  }, 90_000);

  test('logs follow a running Ray job until it ends (cairn logs -f)', async () => {
    const host = new RecordingHost(join(root, 'logs', 'store'));
    const executor = ray();
    await executor.start(host);
    try {
      const job = jobFor(join(root, 'logs'), 'chatty');
      const handle = await executor.submit(job);
      const lines: string[] = [];
      for await (const line of executor.logs!(handle, { follow: true })) lines.push(line);
      expect(await host.final(job.jobKey)).toMatchObject({ state: 'succeeded', result: job.spec.name });
      const text = lines.join('\n');
      expect(text).toContain(`console line of ${job.spec.name}`);
      expect(text).toContain(`console error of ${job.spec.name}`);
      expect(text).toContain(`ctx line of ${job.spec.name}`);
    } finally {
      await executor.stop();
    }
  }, 90_000);

  test('a runner killed while its Ray job runs is replaced by one that adopts the job: one submission in the Jobs API', async () => {
    const prefix = join(root, 'adopt');
    const path = napStep().lower().outputPath(prefix);
    const script = fileURLToPath(new URL('./fixtures/runner-child.mjs', import.meta.url));
    const { child, exited, job } = await startRunnerUntilJob(script, [prefix, cluster.address], path);
    const id = String(job.job.info.submissionId);
    child.kill('SIGKILL');
    await exited;

    const second = ray();
    const summary = await new StepRunner({ prefix, executors: [second], logger: quiet }).run([napStep()]);
    expect(summary.counts).toEqual({ succeeded: 1 });
    expect(second.stats.submissions).toBe(0);
    const record = JSON.parse(readFileSync(join(path, '.artifact.json'), 'utf8')) as ArtifactRecord;
    expect(record.attempts).toMatchObject([{ attempt: 1, state: 'succeeded', executor: 'ray', adopted: true }]);
    expect(existsSync(localLayout.jobFile(path))).toBe(false);
    const naps = (await listJobs()).filter((j) => j.submission_id.startsWith('cairn-nap-'));
    expect(naps.map((j) => [j.submission_id, j.status])).toEqual([[id, 'SUCCEEDED']]);
  }, 120_000);

  test('the same attempt submitted again is never run twice: the same output adopts the job, a dead runner\'s orphan is stopped first, another store\'s job is left alone', async () => {
    const host = new RecordingHost(join(root, 'dup', 'store'));
    const a = ray();
    const b = ray();
    await a.start(host);
    await b.start(host);
    try {
      const job = jobFor(join(root, 'dup'), 'sleepy');
      const first = await a.submit(job);
      const again = await b.submit(job);
      expect(again.info.submissionId).toBe(first.info.submissionId);
      expect(b.stats.submissions).toBe(0);

      // The same step in another store: its live job is left alone.
      const otherStore = { ...job, finalPath: join(root, 'dup', 'other-store'), outputPath: join(root, 'dup', 'other-store'), attemptDir: join(root, 'dup', 'attempts-other') };
      const other = await b.submit(otherStore);
      expect(other.info.submissionId).toBe(`${String(first.info.submissionId)}~2`);

      // A runner that took over after a crash stages the attempt elsewhere, for the same step path.
      const moved = { ...job, outputPath: join(root, 'dup', 'elsewhere'), attemptDir: join(root, 'dup', 'attempts-2') };
      const third = await b.submit(moved);
      expect(third.info.submissionId).toBe(`${String(first.info.submissionId)}~3`);
      await waitFor('the orphan to stop', async () => {
        const now = await listJobs();
        return now.find((j) => j.submission_id === first.info.submissionId && j.status === 'STOPPED');
      });
      const mine = (await listJobs()).filter((j) => j.submission_id.startsWith(String(first.info.submissionId)));
      expect(mine.map((j) => [j.submission_id, j.status]).sort()).toEqual([
        [first.info.submissionId, 'STOPPED'],
        [other.info.submissionId, expect.stringMatching(/PENDING|RUNNING/)],
        [third.info.submissionId, expect.stringMatching(/PENDING|RUNNING/)],
      ]);
      await b.cancel([other]);
      await b.cancel([third]);
      expect(await host.final(job.jobKey, 30_000)).toMatchObject({ state: 'cancelled' });
    } finally {
      await a.stop();
      await b.stop();
    }
  }, 90_000);

  test('GPUs: a step asking for one gets CUDA_VISIBLE_DEVICES and its runtime env; asking for more than any node has is refused with what the cluster offers', async () => {
    const prefix = join(root, 'gpu');
    const one = apply({ name: 'gpu1', fn: gpuEnv, version: 'v1', executor: 'ray', inputs: {}, resources: { gpus: 1, hints: { ray: { runtimeEnv: { envVars: { CAIRN_GREETING: 'hi from runtime_env' } } } } } });
    const [result] = await new StepRunner({ prefix, executors: [ray()], logger: quiet }).run([one]).then(() => [JSON.parse(readFileSync(join(one.lower().outputPath(prefix), '.artifact.json'), 'utf8')).result]);
    expect(result).toMatchObject({ cuda: expect.stringMatching(/^[01]$/), greeting: 'hi from runtime_env' });

    const four = apply({ name: 'gpu4', fn: gpuEnv, version: 'v1', executor: 'ray', retries: 0, inputs: {}, resources: { gpus: 4 } });
    const executor = ray();
    await expect(new StepRunner({ prefix, executors: [executor], logger: quiet }).run([four])).rejects.toThrow(/asks Ray for 4 GPU \(the largest node has 2 GPU\)/);
    expect(executor.stats.submissions).toBe(0);
  }, 90_000);

  // Command steps (programs, no Node.js on the node): test/command.cases.ts.
  commandCases({ cluster: () => cluster, root, ray, quiet, waitFor });

  // Last: it takes the worker node (and its GPUs) away.
  test('a job whose node dies is lost, as an infrastructure failure', async () => {
    const host = new RecordingHost(join(root, 'node-lost', 'store'));
    const executor = ray();
    await executor.start(host);
    try {
      // Only the worker node has GPUs: the job runs there.
      const job = jobFor(join(root, 'node-lost'), 'sleepy', { resources: { cpu: 1, gpus: 1 } });
      await executor.submit(job);
      await host.running(job.jobKey, 60_000);
      await waitFor('the step to start', async () => (existsSync(join(job.outputPath, 'started.txt')) ? true : undefined));
      await cluster.killWorker(0);
      const status = await host.final(job.jobKey, 120_000);
      expect(status).toMatchObject({ state: 'lost', infrastructure: true, reason: expect.stringMatching(/^JOB_SUPERVISOR_ACTOR_/) });
    } finally {
      await executor.stop();
    }
  }, 180_000);
});

describe('the Ray executor without a cluster', () => {
  test('an unreachable dashboard is one typed error, before any submission', async () => {
    const address = `http://127.0.0.1:${await freePort()}`;
    const executor = createRayExecutor({ address });
    const prefix = mkdtempSync(join(tmpdir(), 'cairn-ray-down-'));
    try {
      const err = await new StepRunner({ prefix, executors: [executor], logger: quiet }).run([pipeline('down')]).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(String(err)).toContain(`The Ray dashboard at ${address} did not answer GET /api/version (ECONNREFUSED)`);
      expect(executor.stats.submissions).toBe(0);
      expect(executor.stats.requests).toBe(1);
    } finally {
      rmSync(prefix, { recursive: true, force: true });
    }
  });

  test('an unknown option names the nearest known key', () => {
    expect(() => createRayExecutor({ adress: 'http://x:8265' } as never)).toThrow(/unknown option "adress".*did you mean "address"/);
    expect(() => createRayExecutor({ address: 'http://x:8265', runtimeEnv: { env_vars: {} } as never })).toThrow(/did you mean "envVars"/);
  });
});
