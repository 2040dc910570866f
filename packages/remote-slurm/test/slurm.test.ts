/**
 * The Slurm executor against a REAL single-node Slurm (tools/testenv/slurm.ts), through both
 * transports. Needs Slurm installed (tools/testenv/install-slurm.sh) and the runner's worker
 * entry built (npx tsup in packages/runner). Without Slurm binaries the suite is skipped
 * locally and fails in CI.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { hasCode } from '@cairn/core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { missingSlurmBinaries, startSlurm, type SlurmCluster } from '../../../tools/testenv/slurm.js';
import { createSlurmExecutor, type SlurmExecutor, type SlurmExecutorOptions } from '../src/index.js';
import type { JobStatus } from '../src/runner-api.js';
import { jobFor, RecordingHost, tempRoot, workerEntry } from './helpers.js';

const run = promisify(execFile);
const missing = missingSlurmBinaries();
const skip = missing.length > 0 && !process.env.CI;
if (skip) console.warn(`@cairn/remote-slurm: skipping the Slurm tests: ${missing.join(', ')} not installed (run tools/testenv/install-slurm.sh).`);

let cluster: SlurmCluster;
const executors: SlurmExecutor[] = [];
const root = tempRoot();

function executor(transport: 'cli' | 'rest', extra: Partial<SlurmExecutorOptions> = {}): SlurmExecutor {
  const ex = createSlurmExecutor({
    transport,
    env: cluster.env,
    rest: { url: cluster.restUrl, user: cluster.restUser, token: cluster.restToken },
    workerEntry: workerEntry(),
    exitFileGraceMs: 2000,
    ...extra,
  });
  executors.push(ex);
  return ex;
}

async function started(transport: 'cli' | 'rest', extra: Partial<SlurmExecutorOptions> = {}): Promise<{ ex: SlurmExecutor; host: RecordingHost }> {
  const ex = executor(transport, extra);
  const host = new RecordingHost(join(root, 'store'));
  await ex.start(host);
  return { ex, host };
}

const statusCalls = (ex: SlurmExecutor) => (ex.transport === 'cli' ? ex.stats.squeueCalls : ex.stats.restCalls);

async function squeueNames(): Promise<string[]> {
  const { stdout } = await run('squeue', ['-h', '-t', 'PENDING,RUNNING', '-o', '%j'], { env: { ...process.env, ...cluster.env } });
  return stdout.split('\n').filter(Boolean);
}

// A job that outlives `--time=1` with no walltime warning, so Slurm itself kills it (TIMEOUT).
// Slurm checks limits every 30 s: this takes 60–95 s, so it is submitted first and checked last.
let slurmTimeout: Promise<JobStatus> | undefined;

describe.skipIf(skip)('Slurm executor on a real single-node Slurm', () => {
  beforeAll(async () => {
    cluster = await startSlurm();
    if (!existsSync(workerEntry())) throw new Error(`${workerEntry()} is missing: build @cairn/runner first (npx tsup in packages/runner).`);
    const { ex, host } = await started('cli', { walltimeGraceSeconds: 0 });
    const h = await ex.submit(jobFor(root, 'sleepy', { resources: { timeLimit: 60 } }));
    slurmTimeout = host.final(h.jobId, 120_000);
    slurmTimeout.catch(() => undefined);
  });

  afterAll(async () => {
    for (const ex of executors) await ex.stop();
    await cluster?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  describe.concurrent.each(['cli', 'rest'] as const)('%s transport', (transport) => {
    test('a step succeeds with its result, output and logs', async () => {
      const { ex, host } = await started(transport);
      const job = jobFor(root, 'ok', { resources: { cpu: 1, memoryGb: 0.5, timeLimit: 300 } });
      const h = await ex.submit(job);
      expect(h.info.slurmJobId).toMatch(/^\d+$/);
      const s = await host.final(h.jobId);
      expect(s).toMatchObject({ state: 'succeeded', exitCode: 0, result: { answer: 42, jobId: h.info.slurmJobId } });
      expect(readFileSync(join(job.outputPath, 'done.txt'), 'utf8')).toBe(`hello from ${String(h.info.slurmJobId)}\n`);
      expect(readFileSync(job.logPaths.stdout, 'utf8')).toContain('ok step ran');
      const lines: string[] = [];
      for await (const line of ex.logs!(h, { follow: false })) lines.push(line);
      expect(lines.some((l) => l.includes('ok step ran'))).toBe(true);
      expect(ex.stats.sbatchCalls).toBe(transport === 'cli' ? 1 : 0);
    });

    test('a non-zero exit fails with the exit code and the log tail', async () => {
      const { ex, host } = await started(transport);
      const h = await ex.submit(jobFor(root, 'exit3'));
      const s = await host.final(h.jobId);
      expect(s).toMatchObject({ state: 'failed', exitCode: 3, reason: 'exit code 3' });
      expect(hasCode(s.error, 'CAIRN_REMOTE')).toBe(true);
      expect(String((s.error as Error).message)).toContain('disk on fire');
    });

    test("a thrown error comes back with the step's name, message and code", async () => {
      const { ex, host } = await started(transport);
      const h = await ex.submit(jobFor(root, 'throws'));
      const s = await host.final(h.jobId);
      expect(s).toMatchObject({ state: 'failed', exitCode: 1, reason: 'E_FIXTURE' });
      expect(s.error).toMatchObject({ message: 'the step threw on purpose', code: 'E_FIXTURE' });
    });

    test('an outside scancel fails the step (CANCELLED) at the next status check', async () => {
      const { ex, host } = await started(transport);
      const h = await ex.submit(jobFor(root, 'sleepy'));
      await host.running(h.jobId);
      await run('scancel', [String(h.info.slurmJobId)], { env: { ...process.env, ...cluster.env } });
      const before = statusCalls(ex);
      const s = await host.final(h.jobId);
      expect(s).toMatchObject({ state: 'failed', reason: 'CANCELLED' });
      expect(hasCode(s.error, 'CAIRN_CANCELLED')).toBe(true);
      // The check in flight plus the next one at most.
      expect(statusCalls(ex) - before).toBeLessThanOrEqual(2);
    });

    test('cancel() stops running and queued jobs with one request batch', async () => {
      const { ex, host } = await started(transport);
      const a = await ex.submit(jobFor(root, 'sleepy'));
      const b = await ex.submit(jobFor(root, 'sleepy', { resources: { cpu: 16 } })); // needs the whole node: queued while `a` runs
      await host.running(a.jobId);
      await ex.cancel([a, b]);
      expect(ex.stats.scancelCalls).toBe(transport === 'cli' ? 1 : 0);
      for (const h of [a, b]) expect(await host.final(h.jobId)).toMatchObject({ state: 'cancelled' });
    });

    test('an aborted request signal cancels the job', async () => {
      const { ex, host } = await started(transport);
      const ac = new AbortController();
      const h = await ex.submit(jobFor(root, 'sleepy', { signal: ac.signal }));
      await host.running(h.jobId);
      ac.abort();
      expect(await host.final(h.jobId)).toMatchObject({ state: 'cancelled' });
    });

    test('the walltime warning (USR2 before --time) reports TIMEOUT', async () => {
      // timeLimit 60 s with a 50 s warning: USR2 arrives 10–30 s in (Slurm's signal or the wrapper's watchdog).
      const { ex, host } = await started(transport, { walltimeGraceSeconds: 50 });
      const job = jobFor(root, 'sleepy', { resources: { timeLimit: 60 } });
      const h = await ex.submit(job);
      const s = await host.final(h.jobId, 45_000);
      expect(s).toMatchObject({ state: 'failed', reason: 'TIMEOUT' });
      expect(hasCode(s.error, 'CAIRN_TIMEOUT')).toBe(true);
      expect(readFileSync(join(job.attemptDir, 'exitcode'), 'utf8')).toMatch(/^\d+ USR2\n$/);
    }, 60_000);

    test('a new executor instance adopts a running job instead of resubmitting', async () => {
      const first = await started(transport);
      const job = jobFor(root, 'nap');
      const h = await first.ex.submit(job);
      await first.host.running(h.jobId);
      await first.ex.stop(); // the runner "restarts"
      const recorded = JSON.parse(JSON.stringify(h)) as typeof h; // as persisted in the step's record
      const second = await started(transport);
      expect(await second.ex.adopt!(recorded)).toEqual(recorded);
      const s = await second.host.final(h.jobId);
      expect(s).toMatchObject({ state: 'succeeded', result: `napped in ${String(h.info.slurmJobId)}` });
      expect(second.ex.stats.sbatchCalls).toBe(0);
      expect((await squeueNames()).filter((n) => job.task.nameWithHash && n.endsWith(job.task.nameWithHash))).toEqual([]);
      // A job Slurm never heard of is not adopted.
      expect(await second.ex.adopt!({ ...recorded, jobId: 'ghost', info: { ...recorded.info, slurmJobId: '999999', dir: join(root, 'nowhere') } })).toBeNull();
    });
  });

  describe.each(['cli', 'rest'] as const)('%s transport, 200 tiny steps', (transport) => {
    test('all complete with one batched status check per interval', async () => {
      const { ex, host } = await started(transport);
      const handles = await Promise.all(Array.from({ length: 200 }, () => ex.submit(jobFor(root, 'tiny'))));
      const statuses = await Promise.all(handles.map((h) => host.final(h.jobId, 120_000)));
      expect(statuses.every((s) => s.state === 'succeeded')).toBe(true);
      // One squeue (or one GET /jobs) covers every active job: far fewer checks than jobs.
      const calls = statusCalls(ex) - (transport === 'rest' ? 200 : 0); // REST submits are requests too
      console.info(`${transport}: 200 jobs, ${calls} status checks`);
      expect(calls).toBeLessThan(200);
      expect(new Set(handles.map((h) => h.info.slurmJobId)).size).toBe(200);
    }, 150_000);
  });

  test('sbatch missing → CAIRN_REMOTE naming the command', async () => {
    const { ex } = await started('cli', { env: { ...cluster.env, PATH: join(root, 'no-bin') } });
    const err = await ex.submit(jobFor(root, 'ok')).catch((e: unknown) => e);
    expect(hasCode(err, 'CAIRN_REMOTE')).toBe(true);
    expect((err as Error).message).toMatch(/`sbatch --parsable .*` exited with 127.*not found/s);
  });

  test('an unreachable controller → CAIRN_REMOTE with the command and its stderr', async () => {
    const conf = join(root, 'unreachable.conf');
    const text = readFileSync(cluster.confPath, 'utf8').replace(/^SlurmctldPort=\d+$/m, 'SlurmctldPort=9');
    writeFileSync(conf, text);
    const { ex } = await started('cli', { env: { SLURM_CONF: conf } });
    const err = await ex.submit(jobFor(root, 'ok')).catch((e: unknown) => e);
    expect(hasCode(err, 'CAIRN_REMOTE')).toBe(true);
    expect((err as Error).message).toMatch(/sbatch .* exited with \d+: .*controller/is);
  });

  test('an unreachable slurmrestd → CAIRN_REMOTE', async () => {
    const { ex } = await started('rest', { rest: { url: 'http://127.0.0.1:9', user: 'root', token: 'x' } });
    const err = await ex.submit(jobFor(root, 'ok')).catch((e: unknown) => e);
    expect(hasCode(err, 'CAIRN_REMOTE')).toBe(true);
    expect((err as Error).message).toContain('POST http://127.0.0.1:9/slurm/v0.0.38/job/submit');
  });

  test('Slurm kills a job over its --time: TIMEOUT (slow: 60–95 s, started in beforeAll)', async () => {
    const s = await (slurmTimeout as Promise<JobStatus>);
    expect(s).toMatchObject({ state: 'failed', reason: 'TIMEOUT' });
    expect(hasCode(s.error, 'CAIRN_TIMEOUT')).toBe(true);
  }, 120_000);
});
