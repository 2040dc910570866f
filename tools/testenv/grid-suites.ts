/**
 * Test suites every grid scheduler must pass, on a REAL scheduler (grid-clusters.ts): packing
 * many small steps into job arrays, and a StepRunner pipeline with local and cluster steps,
 * a fully cached rerun and adoption after the runner is SIGKILLed. Each scheduler's test file
 * calls them with its cluster and executor factory.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hasCode, StepSpec } from '@cairn/core';
import type { GridExecutor, GridExecutorOptions } from '@cairn/grid';
import { JOB_FILE, StepRunner, type ArtifactRecord } from '@cairn/runner';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { GRID_STEPS, gridScale, jobFor, RecordingHost, tempRoot, workerEntry } from './grid-jobs.js';
import type { GridTestCluster } from './grid-clusters.js';
import { napSteps } from './grid-pipelines.mjs';

/** Makes the scheduler's executor for a cluster (the plugin's own `create…Executor`). */
export type ExecutorFactory = (cluster: GridTestCluster, options: GridExecutorOptions) => GridExecutor;

/** Shared set-up: one cluster, executors stopped after the suite. */
function harness(start: () => Promise<GridTestCluster>, create: ExecutorFactory) {
  const state = { cluster: undefined as GridTestCluster | undefined, root: tempRoot('cairn-grid-suite-'), executors: [] as GridExecutor[] };
  beforeAll(async () => {
    state.cluster = await start();
  });
  afterAll(async () => {
    for (const ex of state.executors) await ex.stop();
    await state.cluster?.stop();
    rmSync(state.root, { recursive: true, force: true });
  });
  const make = (options: GridExecutorOptions): GridExecutor => {
    const ex = create(state.cluster as GridTestCluster, { workerEntry: workerEntry(), exitFileGraceMs: 2000, ...options });
    state.executors.push(ex);
    return ex;
  };
  const started = async (options: GridExecutorOptions) => {
    const ex = make(options);
    const host = new RecordingHost(join(state.root, 'store'));
    await ex.start(host);
    return { ex, host };
  };
  return { state, make, started, cluster: () => state.cluster as GridTestCluster };
}

/** Packing: many small steps in array jobs, with per-step status, exit codes, logs and cancels. */
export function describePacking(label: string, start: () => Promise<GridTestCluster>, create: ExecutorFactory): void {
  describe(`${label}: packing`, () => {
    const h = harness(start, create);
    const root = () => h.state.root;

    test('steps of one batch share one array submission; each keeps its own result, exit code and log tail', async () => {
      const { ex, host } = await h.started({ pack: { stepsPerTask: 4, maxWaitMs: 200 } });
      const jobs = ['ok', 'exit3', 'throws', 'tiny', 'tiny', 'ok', 'tiny'].map((n) => jobFor(root(), n));
      const handles = await Promise.all(jobs.map((j) => ex.submit(j)));
      expect(ex.counters.submissions).toBe(1);
      expect(new Set(handles.map((x) => x.info[ex.scheduler.idKey])).size).toBe(2); // 7 steps, 4 per task
      const s = await Promise.all(handles.map((x) => host.final(x.jobId)));
      expect(s[0]).toMatchObject({ state: 'succeeded', exitCode: 0, result: { answer: 42 } });
      expect(s[1]).toMatchObject({ state: 'failed', exitCode: 3, reason: 'exit code 3' });
      expect(String((s[1]!.error as Error).message)).toContain('disk on fire');
      expect(s[2]).toMatchObject({ state: 'failed', exitCode: 1, reason: 'E_FIXTURE' });
      for (const i of [3, 4, 5, 6]) expect(s[i]!.state).toBe('succeeded');
      expect(readFileSync(jobs[0]!.logPaths.stdout, 'utf8')).toContain('ok step ran');
      expect(readFileSync(jobs[5]!.logPaths.stdout, 'utf8')).not.toContain(jobs[0]!.spec.name);
    });

    test('cancel() of one packed step stops only it; cancelling every step of a task cancels the task', async () => {
      const { ex, host } = await h.started({ pack: { stepsPerTask: 2, maxWaitMs: 100 } });
      const [a, b, c, d] = await Promise.all(['sleepy', 'tiny', 'sleepy', 'sleepy'].map((n) => ex.submit(jobFor(root(), n))));
      await host.running(a!.jobId);
      await ex.cancel([a!]);
      expect(await host.final(a!.jobId)).toMatchObject({ state: 'cancelled' });
      expect(await host.final(b!.jobId)).toMatchObject({ state: 'succeeded' });
      const before = ex.counters.cancellations;
      await ex.cancel([c!, d!]);
      expect(ex.counters.cancellations).toBe(before + 1);
      for (const x of [c!, d!]) expect(await host.final(x.jobId)).toMatchObject({ state: 'cancelled' });
    });

    test('an outside cancel of an array task fails its steps (CANCELLED) within a poll', async () => {
      const { ex, host } = await h.started({ pack: { stepsPerTask: 2, maxWaitMs: 100 } });
      const [a, b] = await Promise.all(['sleepy', 'tiny'].map((n) => ex.submit(jobFor(root(), n))));
      await host.running(a!.jobId);
      await h.cluster().externalCancel(String(a!.info[ex.scheduler.idKey]));
      const before = ex.counters.statusQueries;
      for (const x of [a!, b!]) {
        const s = await host.final(x.jobId);
        expect(s).toMatchObject({ state: 'failed', reason: 'CANCELLED' });
        expect(hasCode(s.error, 'CAIRN_CANCELLED')).toBe(true);
      }
      expect(ex.counters.statusQueries - before).toBeLessThanOrEqual(2);
    });

    test("a packed step's own time limit stops it as TIMEOUT; its task goes on with the next step", async () => {
      const { ex, host } = await h.started({ pack: { stepsPerTask: 2, maxWaitMs: 100 } });
      const [a, b] = await Promise.all(['sleepy', 'tiny'].map((n) => ex.submit(jobFor(root(), n, { resources: { timeLimit: 2 } }))));
      const s = await host.final(a!.jobId);
      expect(s).toMatchObject({ state: 'failed', reason: 'TIMEOUT' });
      expect(hasCode(s.error, 'CAIRN_TIMEOUT')).toBe(true);
      expect(await host.final(b!.jobId)).toMatchObject({ state: 'succeeded' });
    });

    const n = gridScale().packedSteps;
    test(`${n} tiny steps packed: few submissions, few status queries`, async () => {
      const { ex, host } = await h.started({ pack: {} });
      const handles = await Promise.all(Array.from({ length: n }, () => ex.submit(jobFor(root(), 'tiny'))));
      const statuses = await Promise.all(handles.map((x) => host.final(x.jobId, 240_000)));
      expect(statuses.filter((s) => s.state !== 'succeeded')).toEqual([]);
      console.info(`${label}: ${n} packed steps, ${ex.counters.submissions} submission(s), ${ex.counters.statusQueries} status queries, ${ex.counters.accountingQueries} accounting queries`);
      expect(ex.counters.submissions).toBeLessThanOrEqual(2);
      expect(ex.counters.statusQueries).toBeLessThan(n / 10);
    }, 300_000);
  });
}

/** Options of {@link describeRunner}. */
export interface RunnerSuiteOptions {
  /** Also run the adoption test with one job per step. @default false */
  readonly single?: boolean;
}

/** A StepRunner with the grid executor: a mixed pipeline, a cached rerun, adoption after SIGKILL. */
export function describeRunner(label: string, start: () => Promise<GridTestCluster>, create: ExecutorFactory, suite: RunnerSuiteOptions = {}): void {
  describe(`${label}: StepRunner`, () => {
    const h = harness(start, create);
    const scheduler = () => h.cluster().scheduler;

    function pipeline(executor: string): StepSpec {
      const prep = new StepSpec({
        name: 'prep',
        executor: 'inline',
        hashAttrs: { rows: 3 },
        fn: async (out: string) => void (await writeFile(join(out, 'data.txt'), `prep@${process.pid}\n`)),
      });
      const ref = { module: GRID_STEPS, export: 'concat' };
      const left = new StepSpec({ name: 'left', deps: [prep], executor, ref, resources: { cpu: 1, timeLimit: 120 } });
      const right = new StepSpec({ name: 'right', deps: [prep], executor, ref, resources: { cpu: 1, timeLimit: 120 } });
      return new StepSpec({ name: 'join', deps: [left, right], executor, ref });
    }

    test('a pipeline of local and packed cluster steps runs, then reruns fully cached', async () => {
      const prefix = join(h.state.root, 'pipeline');
      const first = h.make({ pack: { maxWaitMs: 200 } });
      const target = pipeline(first.name);
      const summary = await new StepRunner({ prefix, executors: [first] }).run([target]);
      expect('counts' in summary && summary.counts).toEqual({ succeeded: 4 });
      const text = readFileSync(join(target.outputPath(prefix), 'data.txt'), 'utf8');
      expect(text).toMatch(new RegExp(`^prep@${process.pid}>left@\\d+\\+prep@${process.pid}>right@\\d+>join@\\d+\\n$`));
      // left and right are ready together: one array; join alone: its own job.
      expect(first.counters.submissions).toBe(2);
      const second = h.make({ pack: { maxWaitMs: 200 } });
      const again = await new StepRunner({ prefix, executors: [second] }).run([pipeline(second.name)]);
      expect('counts' in again && again.counts).toEqual({ cached: 1 });
      expect(second.counters.submissions).toBe(0);
    }, 90_000);

    for (const packed of suite.single ? [true, false] : [true]) {
      test(`a runner SIGKILLed while its ${packed ? 'packed ' : ''}jobs run is restarted and adopts them: no job is submitted twice`, async () => {
        const tag = `adopt-${packed ? 'packed' : 'single'}`;
        const prefix = join(h.state.root, tag);
        const count = packed ? 6 : 2;
        const options = { env: h.cluster().env, workerEntry: workerEntry(), jobNamePrefix: tag, ...(packed ? { pack: { stepsPerTask: 2, maxWaitMs: 300 } } : {}) };
        const steps = napSteps(scheduler(), count, tag);
        const child = spawn(process.execPath, [fileURLToPath(new URL('./grid-runner-child.mjs', import.meta.url)), scheduler(), prefix, JSON.stringify(options), String(count), tag], {
          env: { ...process.env, ...h.cluster().env },
          stdio: ['ignore', 'ignore', 'pipe'],
        });
        let stderr = '';
        child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
        const exited = new Promise((resolve) => child.once('exit', resolve));
        const jobFiles = steps.map((s) => join(s.outputPath(prefix), JOB_FILE));
        const deadline = Date.now() + 60_000;
        while (!jobFiles.every((f) => existsSync(f))) {
          if (Date.now() > deadline) throw new Error(`the first runner never recorded all its jobs: ${stderr}`);
          await new Promise((r) => setTimeout(r, 50));
        }
        // Job ids (an array's tasks count as their array) the scheduler lists for this test.
        const ours = async () => (await h.cluster().jobs()).filter((j) => j.name.startsWith(tag)).map((j) => j.id.split(/[._]/)[0] as string);
        const before = new Set(await ours());
        expect(before.size).toBeGreaterThan(0);
        child.kill('SIGKILL');
        await exited;

        const second = h.make({ jobNamePrefix: tag, ...(packed ? { pack: { stepsPerTask: 2, maxWaitMs: 300 } } : {}) });
        const summary = await new StepRunner({ prefix, executors: [second], maxConcurrent: 100, logger: { info() {}, warn() {}, error() {} } }).run(steps);
        expect(summary.counts).toEqual({ succeeded: count });
        expect(second.counters.submissions).toBe(0);
        // The scheduler's own list: nothing but the first runner's jobs.
        expect((await ours()).filter((id) => !before.has(id))).toEqual([]);
        for (const s of steps) {
          const record = JSON.parse(readFileSync(join(s.outputPath(prefix), '.artifact.json'), 'utf8')) as ArtifactRecord;
          expect(record.result).toMatch(/^napped in \d+$/);
          expect(record.attempts).toMatchObject([{ attempt: 1, state: 'succeeded', adopted: true }]);
        }
      }, 120_000);
    }
  });
}
