import { existsSync, mkdirSync, readFileSync, writeFileSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalStore, StepRunner, type ArtifactRecord, type JobRecord } from '../src/index.js';
import { attemptDir, jobFile, leaseFile, stagedAt } from '../src/store/local/layout.js';
import { Graph, memoryLogger, tempDirs } from './helpers/graph.js';
import { scriptedExecutor } from './helpers/scripted-executor.js';

const dir = tempDirs();

/**
 * What a runner killed mid-step leaves behind: its lease (its process is gone), the job it
 * recorded, and the staged directory that job writes into (with a file of the job's output).
 */
function deadRunnerLeftovers(path: string, job: JobRecord): void {
  const staged = job.staged as NonNullable<JobRecord['staged']>;
  mkdirSync(staged.dir, { recursive: true });
  writeFileSync(join(staged.dir, 'part'), 'written by the adopted job');
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(jobFile(path), JSON.stringify(job));
  const holder = { worker_id: 'elsewhere-1-old', timestamp: Date.now() / 1000 - 3600, host: 'elsewhere', pid: 1, processStartTime: null, runId: 'old', token: 'old.1' };
  writeFileSync(leaseFile(path), JSON.stringify(holder));
  utimesSync(leaseFile(path), holder.timestamp, holder.timestamp);
}

function leftoverJob(path: string, jobId: string): JobRecord {
  const earlier = { attempt: 1, start: 1, end: 2, state: 'failed' as const, executor: 'cluster', jobId: 'old-1', host: 'elsewhere' };
  const staged = stagedAt(path, attemptDir(path, 'old', 2), 2);
  return { cairn: 1, executor: 'cluster', job: { jobId, executor: 'scripted', info: { slurmJobId: '42' } }, attempt: 2, start: 3, firstStart: 1, attempts: [earlier], host: 'elsewhere', runId: 'old', staged };
}

const record = (path: string) => JSON.parse(readFileSync(join(path, '.artifact.json'), 'utf8')) as ArtifactRecord;

describe('adopting jobs of a dead runner', () => {
  it('records the job of a resumable executor while it runs and removes it at the commit', async () => {
    const prefix = dir();
    const ex = scriptedExecutor(() => ({ delayMs: 50 }), { capabilities: { resumable: true } });
    const g = new Graph().step('a', [], { executor: 'cluster', retries: 1 });
    const path = g.get('a').outputPath(prefix);
    const running = new StepRunner({ prefix, executors: { cluster: ex } }).run(g.pick('a'));
    while (!existsSync(jobFile(path))) await new Promise((r) => setTimeout(r, 2));
    const job = JSON.parse(readFileSync(jobFile(path), 'utf8')) as JobRecord;
    expect(job).toMatchObject({ cairn: 1, executor: 'cluster', attempt: 1, attempts: [], job: { jobId: `${g.get('a').nameWithHash}.1#1` } });
    await running;
    expect(existsSync(jobFile(path))).toBe(false);
    expect(readFileSync(join(path, '.executor_status'), 'utf8')).toBe('SUCCESS');
  });

  it('does not record jobs of executors that are not resumable', async () => {
    const prefix = dir();
    const ex = scriptedExecutor(() => ({ delayMs: 20 }));
    const g = new Graph().step('a', [], { executor: 'cluster' });
    const path = g.get('a').outputPath(prefix);
    const running = new StepRunner({ prefix, executors: { cluster: ex } }).run(g.pick('a'));
    while (ex.submitted.length === 0) await new Promise((r) => setTimeout(r, 1));
    await new Promise((r) => setTimeout(r, 5));
    expect(existsSync(jobFile(path))).toBe(false);
    await running;
  });

  it('takes over the lease and waits for the recorded job instead of submitting (same attempt, marked adopted)', async () => {
    const prefix = dir();
    const ex = scriptedExecutor(() => ({}), { capabilities: { resumable: true }, adopt: () => ({ delayMs: 5, status: { state: 'succeeded', result: { from: 'adopted' } } }) });
    const g = new Graph().step('a', [], { executor: 'cluster', retries: 1 });
    const path = g.get('a').outputPath(prefix);
    deadRunnerLeftovers(path, leftoverJob(path, 'job-7'));
    const logger = memoryLogger();
    const summary = await new StepRunner({ prefix, executors: { cluster: ex }, logger }).run(g.pick('a'));
    expect(summary.counts).toEqual({ succeeded: 1 });
    expect(ex.submitted).toHaveLength(0);
    expect(ex.adopted).toEqual(['job-7']);
    expect(g.calls).toEqual([]);
    const rec = record(path);
    expect(rec.result).toEqual({ from: 'adopted' });
    expect(rec.attempts.map((a) => [a.attempt, a.state, a.executor, a.jobId, a.adopted])).toEqual([
      [1, 'failed', 'cluster', 'old-1', undefined],
      [2, 'succeeded', 'cluster', 'job-7', true],
    ]);
    expect(rec.job?.info).toEqual({ slurmJobId: '42' });
    expect(existsSync(jobFile(path))).toBe(false);
    expect(existsSync(leaseFile(path))).toBe(false);
    // The adopted job's staged output is what was committed.
    expect(readFileSync(join(path, 'part'), 'utf8')).toBe('written by the adopted job');
    expect(logger.lines.some((l) => l.includes('adopted job job-7'))).toBe(true);
  });

  it('submits afresh when the recorded job is gone', async () => {
    const prefix = dir();
    const ex = scriptedExecutor(() => ({}), { capabilities: { resumable: true }, adopt: () => null });
    const g = new Graph().step('a', [], { executor: 'cluster' });
    const path = g.get('a').outputPath(prefix);
    deadRunnerLeftovers(path, leftoverJob(path, 'job-8'));
    await new StepRunner({ prefix, executors: { cluster: ex }, logger: memoryLogger() }).run(g.pick('a'));
    expect(ex.submitted).toHaveLength(1);
    expect(ex.adopted).toEqual([]);
    expect(record(path).attempts.map((a) => [a.attempt, a.adopted])).toEqual([[1, undefined]]);
    expect(existsSync(jobFile(path))).toBe(false);
    // The dead runner's staged directory was swept, not committed.
    expect(existsSync(join(path, 'part'))).toBe(false);
    expect(existsSync(attemptDir(path, 'old', 2))).toBe(false);
  });

  it('ignores a job file when the lease was not taken over from a dead runner', async () => {
    const prefix = dir();
    const ex = scriptedExecutor(() => ({}), { capabilities: { resumable: true }, adopt: () => ({}) });
    const g = new Graph().step('a', [], { executor: 'cluster' });
    const path = g.get('a').outputPath(prefix);
    mkdirSync(prefix, { recursive: true });
    await new LocalStore().writeJob(path, leftoverJob(path, 'job-9'));
    await new StepRunner({ prefix, executors: { cluster: ex } }).run(g.pick('a'));
    expect(ex.adopted).toEqual([]);
    expect(ex.submitted).toHaveLength(1);
    expect(existsSync(jobFile(path))).toBe(false);
  });
});
