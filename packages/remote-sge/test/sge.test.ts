/**
 * The Grid Engine executor against a REAL one-host Son of Grid Engine cell (tools/testenv/sge.ts).
 * Needs gridengine-master, -exec and -client (tools/testenv/install-system.sh) and the built
 * runner and grid packages. Without Grid Engine the suite is skipped locally and fails in CI.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { hasCode } from '@cairn/core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { jobFor, RecordingHost, tempRoot, workerEntry } from '../../../tools/testenv/grid-jobs.js';
import { missingSgeBinaries, startSge, type SgeCell } from '../../../tools/testenv/sge.js';
import { createSgeExecutor, type SgeExecutor, type SgeExecutorOptions } from '../src/index.js';

const run = promisify(execFile);
const missing = missingSgeBinaries();
const skip = missing.length > 0 && !process.env.CI;
if (skip) console.warn(`@cairn/remote-sge: skipping the Grid Engine tests: ${missing.join(', ')} not installed (run tools/testenv/install-system.sh).`);

let cell: SgeCell;
const executors: SgeExecutor[] = [];
const root = tempRoot('cairn-sge-test-');

async function started(extra: Partial<SgeExecutorOptions> = {}): Promise<{ ex: SgeExecutor; host: RecordingHost }> {
  const ex = createSgeExecutor({ env: cell.env, workerEntry: workerEntry(), exitFileGraceMs: 2000, ...extra });
  executors.push(ex);
  const host = new RecordingHost(join(root, 'store'));
  await ex.start(host);
  return { ex, host };
}

const sge = (cmd: string, args: string[]) => run(cmd, args, { env: { ...process.env, ...cell.env } });

/** Job ids Grid Engine lists (its own view, for "no duplicate submissions"). */
async function qstatIds(): Promise<string[]> {
  const { stdout } = await sge('qstat', []);
  return stdout
    .split('\n')
    .slice(2)
    .map((l) => l.trim().split(/\s+/)[0] ?? '')
    .filter(Boolean);
}

describe.skipIf(skip)('Grid Engine executor on a real one-host cell', () => {
  beforeAll(async () => {
    cell = await startSge({ slots: 8 });
  });
  afterAll(async () => {
    for (const ex of executors) await ex.stop();
    await cell?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  test('a step succeeds with its result, output and logs (qsub -terse, a submit script)', async () => {
    const { ex, host } = await started();
    const job = jobFor(root, 'ok', { resources: { cpu: 1, memoryGb: 1, timeLimit: 300 } });
    const h = await ex.submit(job);
    expect(h.info.sgeJobId).toMatch(/^\d+$/);
    const s = await host.final(h.jobId);
    expect(s).toMatchObject({ state: 'succeeded', exitCode: 0, result: { answer: 42, jobId: h.info.sgeJobId } });
    expect(readFileSync(join(job.outputPath, 'done.txt'), 'utf8')).toBe(`hello from ${String(h.info.sgeJobId)}\n`);
    expect(readFileSync(job.logPaths.stdout, 'utf8')).toContain('ok step ran');
    const lines: string[] = [];
    for await (const line of ex.logs!(h, { follow: false })) lines.push(line);
    expect(lines.some((l) => l.includes('ok step ran'))).toBe(true);
    expect(ex.stats.qsubCalls).toBe(1);
  });

  test('a non-zero exit fails with the exit code and the log tail', async () => {
    const { ex, host } = await started();
    const h = await ex.submit(jobFor(root, 'exit3'));
    const s = await host.final(h.jobId);
    expect(s).toMatchObject({ state: 'failed', exitCode: 3, reason: 'exit code 3' });
    expect(hasCode(s.error, 'CAIRN_REMOTE')).toBe(true);
    expect(String((s.error as Error).message)).toContain('disk on fire');
  });

  test("a thrown error comes back with the step's name, message and code", async () => {
    const { ex, host } = await started();
    const s = await host.final((await ex.submit(jobFor(root, 'throws'))).jobId);
    expect(s).toMatchObject({ state: 'failed', exitCode: 1, reason: 'E_FIXTURE' });
    expect(s.error).toMatchObject({ message: 'the step threw on purpose', code: 'E_FIXTURE' });
  });

  test('an outside qdel fails the step (CANCELLED) at the next status check', async () => {
    const { ex, host } = await started();
    const h = await ex.submit(jobFor(root, 'sleepy'));
    await host.running(h.jobId);
    await sge('qdel', [String(h.info.sgeJobId)]);
    const before = ex.counters.statusQueries;
    const s = await host.final(h.jobId);
    expect(s).toMatchObject({ state: 'failed', reason: 'CANCELLED' });
    expect(hasCode(s.error, 'CAIRN_CANCELLED')).toBe(true);
    // The check in flight plus the next one at most.
    expect(ex.counters.statusQueries - before).toBeLessThanOrEqual(2);
  });

  test('cancel() stops running and queued jobs with one qdel', async () => {
    const { ex, host } = await started();
    const a = await ex.submit(jobFor(root, 'sleepy'));
    const b = await ex.submit(jobFor(root, 'sleepy', { resources: { hints: { queue: cell.heldQueue } } })); // a queue with no slots: stays queued
    await host.running(a.jobId);
    await ex.cancel([a, b]);
    expect(ex.stats.qdelCalls).toBe(1);
    for (const h of [a, b]) expect(await host.final(h.jobId)).toMatchObject({ state: 'cancelled' });
    // Reported at `dr` (deletion under way); the cell lets the jobs go soon after.
    const ids = [String(a.info.sgeJobId), String(b.info.sgeJobId)];
    const deadline = Date.now() + 15_000;
    while ((await qstatIds()).some((id) => ids.includes(id)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    expect((await qstatIds()).filter((id) => ids.includes(id))).toEqual([]);
  });

  test('an aborted request signal cancels the job', async () => {
    const { ex, host } = await started();
    const ac = new AbortController();
    const h = await ex.submit(jobFor(root, 'sleepy', { signal: ac.signal }));
    await host.running(h.jobId);
    ac.abort();
    expect(await host.final(h.jobId)).toMatchObject({ state: 'cancelled' });
  });

  test("the walltime warning (the wrapper's USR2 before h_rt) reports TIMEOUT", async () => {
    const { ex, host } = await started({ walltimeGraceSeconds: 15 });
    const job = jobFor(root, 'sleepy', { resources: { timeLimit: 20 } });
    const s = await host.final((await ex.submit(job)).jobId, 40_000);
    expect(s).toMatchObject({ state: 'failed', reason: 'TIMEOUT' });
    expect(hasCode(s.error, 'CAIRN_TIMEOUT')).toBe(true);
    expect(readFileSync(join(job.attemptDir, 'exitcode'), 'utf8')).toMatch(/^\d+ USR2\n$/);
  });

  test('Grid Engine kills a job at its h_rt: TIMEOUT (from qacct)', async () => {
    const { ex, host } = await started({ walltimeGraceSeconds: 0 });
    const job = jobFor(root, 'sleepy', { resources: { timeLimit: 4 } });
    const s = await host.final((await ex.submit(job)).jobId, 40_000);
    expect(s).toMatchObject({ state: 'failed', reason: 'TIMEOUT' });
    expect(hasCode(s.error, 'CAIRN_TIMEOUT')).toBe(true);
    expect(existsSync(join(job.attemptDir, 'exitcode'))).toBe(false); // SIGKILL: only accounting knows
    expect(ex.stats.qacctCalls).toBeGreaterThan(0);
  });

  test('a new executor instance adopts a running job instead of resubmitting', async () => {
    const first = await started();
    const job = jobFor(root, 'nap');
    const h = await first.ex.submit(job);
    await first.host.running(h.jobId);
    await first.ex.stop(); // the runner "restarts"
    const recorded = JSON.parse(JSON.stringify(h)) as typeof h;
    const second = await started();
    expect(await second.ex.adopt!(recorded)).toEqual(recorded);
    const s = await second.host.final(h.jobId);
    expect(s).toMatchObject({ state: 'succeeded', result: `napped in ${String(h.info.sgeJobId)}` });
    expect(second.ex.stats.qsubCalls).toBe(0);
    expect(await second.ex.adopt!({ ...recorded, jobId: 'ghost', info: { ...recorded.info, sgeJobId: '999999', dir: join(root, 'nowhere') } })).toBeNull();
  });

  test('qsub missing → CAIRN_REMOTE naming the command', async () => {
    const { ex } = await started({ env: { ...cell.env, PATH: join(root, 'no-bin') } });
    const err = await ex.submit(jobFor(root, 'ok')).catch((e: unknown) => e);
    expect(hasCode(err, 'CAIRN_REMOTE')).toBe(true);
    expect((err as Error).message).toMatch(/`qsub -terse .*` exited with 127.*not found/s);
  });

  test('an unreachable qmaster → CAIRN_REMOTE with the command and a hint', async () => {
    const { ex } = await started({ env: { ...cell.env, SGE_QMASTER_PORT: '9' } });
    const err = await ex.submit(jobFor(root, 'ok')).catch((e: unknown) => e);
    expect(hasCode(err, 'CAIRN_REMOTE')).toBe(true);
    expect((err as Error).message).toMatch(/qsub .* exited with \d+: .*qmaster/is);
  }, 60_000);

  test('more than one CPU without a parallel environment → CAIRN_CONFIG before anything is submitted', async () => {
    const { ex } = await started();
    const err = await ex.submit(jobFor(root, 'ok', { resources: { cpu: 4 } })).catch((e: unknown) => e);
    expect(hasCode(err, 'CAIRN_CONFIG')).toBe(true);
    expect((err as Error).message).toMatch(/parallelEnvironment/);
    expect(ex.stats.qsubCalls).toBe(0);
  });
});
