/**
 * Packing on a REAL single-node Slurm (tools/testenv/slurm.ts): many small steps in `--array`
 * jobs whose tasks run several steps each, with per-step status, exit codes, logs and cancels.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { hasCode } from '@cairn/core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { gridScale } from '../../../tools/testenv/grid-jobs.js';
import { missingSlurmBinaries, startSlurm, type SlurmCluster } from '../../../tools/testenv/slurm.js';
import { createSlurmExecutor, type SlurmExecutor, type SlurmExecutorOptions } from '../src/index.js';
import { jobFor, RecordingHost, tempRoot, workerEntry } from './helpers.js';

const run = promisify(execFile);
const skip = missingSlurmBinaries().length > 0 && !process.env.CI;

let cluster: SlurmCluster;
const executors: SlurmExecutor[] = [];
const root = tempRoot();

async function started(extra: Partial<SlurmExecutorOptions> = {}): Promise<{ ex: SlurmExecutor; host: RecordingHost }> {
  const ex = createSlurmExecutor({ env: cluster.env, workerEntry: workerEntry(), exitFileGraceMs: 2000, pack: { stepsPerTask: 4, maxWaitMs: 200 }, ...extra });
  executors.push(ex);
  const host = new RecordingHost(join(root, 'store'));
  await ex.start(host);
  return { ex, host };
}

async function squeueIds(): Promise<string[]> {
  const { stdout } = await run('squeue', ['-h', '-o', '%i'], { env: { ...process.env, ...cluster.env } });
  return stdout.split('\n').filter(Boolean);
}

describe.skipIf(skip)('packing on a real single-node Slurm', () => {
  beforeAll(async () => {
    cluster = await startSlurm({ rest: false });
  });
  afterAll(async () => {
    for (const ex of executors) await ex.stop();
    await cluster?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  test('steps of one batch share one --array submission; each keeps its own result, exit code and log tail', async () => {
    const { ex, host } = await started();
    const names = ['ok', 'exit3', 'throws', 'tiny', 'tiny', 'ok', 'tiny'];
    const jobs = names.map((n) => jobFor(root, n));
    const handles = await Promise.all(jobs.map((j) => ex.submit(j)));
    expect(ex.stats.sbatchCalls).toBe(1);
    const arrayIds = new Set(handles.map((h) => String(h.info.slurmJobId).split('_')[0]));
    expect(arrayIds.size).toBe(1);
    expect(new Set(handles.map((h) => h.info.slurmJobId)).size).toBe(2); // 7 steps, 4 per task
    const s = await Promise.all(handles.map((h) => host.final(h.jobId)));
    expect(s[0]).toMatchObject({ state: 'succeeded', exitCode: 0, result: { answer: 42 } });
    expect(s[1]).toMatchObject({ state: 'failed', exitCode: 3, reason: 'exit code 3' });
    expect(hasCode(s[1]!.error, 'CAIRN_REMOTE')).toBe(true);
    expect(String((s[1]!.error as Error).message)).toContain('disk on fire');
    expect(s[2]).toMatchObject({ state: 'failed', exitCode: 1, reason: 'E_FIXTURE' });
    for (const i of [3, 4, 5, 6]) expect(s[i]!.state).toBe('succeeded');
    expect(readFileSync(jobs[0]!.logPaths.stdout, 'utf8')).toContain('ok step ran');
    expect(readFileSync(jobs[5]!.logPaths.stdout, 'utf8')).not.toContain(jobs[0]!.spec.name);
  });

  test('cancel() of one packed step stops only that step; cancelling every step of a task cancels the task', async () => {
    const { ex, host } = await started({ pack: { stepsPerTask: 2, maxWaitMs: 100 } });
    const [a, b, c, d] = await Promise.all([jobFor(root, 'sleepy'), jobFor(root, 'tiny'), jobFor(root, 'sleepy'), jobFor(root, 'sleepy')].map((j) => ex.submit(j)));
    await host.running(a!.jobId);
    await ex.cancel([a!]);
    expect(await host.final(a!.jobId)).toMatchObject({ state: 'cancelled' });
    expect(await host.final(b!.jobId)).toMatchObject({ state: 'succeeded' });
    const before = ex.stats.scancelCalls;
    await ex.cancel([c!, d!]);
    expect(ex.stats.scancelCalls).toBe(before + 1);
    for (const h of [c!, d!]) expect(await host.final(h.jobId)).toMatchObject({ state: 'cancelled' });
    expect(await squeueIds()).not.toContain(String(c!.info.slurmJobId));
  });

  test('an outside scancel of an array task fails its steps (CANCELLED) within a poll', async () => {
    const { ex, host } = await started({ pack: { stepsPerTask: 2, maxWaitMs: 100 } });
    const [a, b] = await Promise.all([jobFor(root, 'sleepy'), jobFor(root, 'tiny')].map((j) => ex.submit(j)));
    await host.running(a!.jobId);
    await run('scancel', [String(a!.info.slurmJobId)], { env: { ...process.env, ...cluster.env } });
    const before = ex.counters.statusQueries;
    for (const h of [a!, b!]) {
      const s = await host.final(h.jobId);
      expect(s).toMatchObject({ state: 'failed', reason: 'CANCELLED' });
      expect(hasCode(s.error, 'CAIRN_CANCELLED')).toBe(true);
    }
    expect(ex.counters.statusQueries - before).toBeLessThanOrEqual(2);
  });

  test("a packed step's time limit stops it as TIMEOUT; the task goes on with the next step", async () => {
    const { ex, host } = await started({ pack: { stepsPerTask: 2, maxWaitMs: 100 } });
    const [a, b] = await Promise.all([jobFor(root, 'sleepy', { resources: { timeLimit: 2 } }), jobFor(root, 'tiny', { resources: { timeLimit: 2 } })].map((j) => ex.submit(j)));
    const s = await host.final(a!.jobId);
    expect(s).toMatchObject({ state: 'failed', reason: 'TIMEOUT' });
    expect(hasCode(s.error, 'CAIRN_TIMEOUT')).toBe(true);
    expect(await host.final(b!.jobId)).toMatchObject({ state: 'succeeded' });
  });

  test(`${gridScale().packedSteps} tiny steps packed: few submissions, few status queries`, async () => {
    const n = gridScale().packedSteps;
    const { ex, host } = await started({ pack: {} });
    const handles = await Promise.all(Array.from({ length: n }, () => ex.submit(jobFor(root, 'tiny'))));
    const statuses = await Promise.all(handles.map((h) => host.final(h.jobId, 240_000)));
    expect(statuses.filter((s) => s.state !== 'succeeded')).toEqual([]);
    console.info(`slurm: ${n} packed steps, ${ex.counters.submissions} submission(s), ${ex.counters.statusQueries} status queries, ${ex.stats.squeueCalls} squeue`);
    expect(ex.counters.submissions).toBeLessThanOrEqual(Math.ceil(n / 25 / 500) + 1);
    expect(ex.stats.sbatchCalls).toBe(ex.counters.submissions);
    expect(ex.counters.statusQueries).toBeLessThan(n / 10);
    expect(existsSync(handles[0]!.info.dir as string)).toBe(true);
  }, 300_000);
});
