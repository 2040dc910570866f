/**
 * Test suites every grid scheduler must pass, on a REAL scheduler (grid-clusters.ts): packing
 * many small steps into job arrays, and a StepRunner pipeline with local and cluster steps,
 * a fully cached rerun and adoption after the runner is SIGKILLed. Each scheduler's test file
 * calls them with its cluster and executor factory.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { command, hasCode, OUT, StepSpec, type Resources } from '@cairn/core';
import type { GridExecutor, GridExecutorOptions } from '@cairn/grid';
import { localLayout, readUsage, StepRunner, type ArtifactRecord, type JobHandle } from '@cairn/runner';
import { writeFakeNvidiaSmi } from './fake-nvidia-smi.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { commandJobFor, GRID_PROGRAMS, GRID_STEPS, gridScale, jobFor, RecordingHost, tempRoot, workerEntry } from './grid-jobs.js';
import type { GridTestCluster } from './grid-clusters.js';
import { napSteps } from './grid-pipelines.mjs';

/** Resolves with `path`'s JSON once it exists (rejects after `timeoutMs`). */
async function jsonFile<T>(path: string, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (!existsSync(path)) {
    if (Date.now() > deadline) throw new Error(`${path} never appeared`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return JSON.parse(readFileSync(path, 'utf8')) as T;
}

/** True while `pid` is a live process (a zombie counts as gone). */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** Resolves once none of `pids` is alive; rejects naming the survivors after `timeoutMs`. */
async function allGone(pids: readonly number[], timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (pids.some(alive)) {
    if (Date.now() > deadline) {
      const left = pids.filter(alive).map((p) => `${p} (${readFileSync(`/proc/${p}/cmdline`, 'utf8').replace(/\0/g, ' ').trim()})`);
      throw new Error(`still running after the cancel (pids ${pids.join(', ')}): ${left.join(', ')}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Makes the scheduler's executor for a cluster (the plugin's own `create…Executor`). */
export type ExecutorFactory = (cluster: GridTestCluster, options: GridExecutorOptions) => GridExecutor;

/** What {@link describeExecutor} needs from the test file that runs it (its cluster is already up). */
export interface ExecutorSuiteContext {
  /** A started executor and the host it reports to. */
  started(options?: Record<string, unknown>): Promise<{ ex: GridExecutor; host: RecordingHost }>;
  /** The test's temp directory. */
  root(): string;
  /** The running cluster. */
  cluster(): Pick<GridTestCluster, 'externalCancel' | 'jobs'>;
  /** Resources that keep a job queued while another runs (the whole node, a queue with no slots). */
  readonly queued: Resources;
  /** Resources of the first step (CPUs, memory and a time limit the scheduler must grant). */
  readonly requested: Resources;
  /** A time limit and walltime grace whose warning (USR2) comes within the test's time. */
  readonly warning: { readonly timeLimit: number; readonly graceSeconds: number; readonly timeoutMs: number };
}

/**
 * One job per step, on any scheduler: results, exit codes, log tails, thrown errors, outside and
 * own cancels, the walltime warning, adoption by a new executor instance.
 */
export function describeExecutor(label: string, c: ExecutorSuiteContext, concurrent = false): void {
  (concurrent ? describe.concurrent : describe)(label, () => {
    const id = (ex: GridExecutor, h: JobHandle) => String(h.info[ex.scheduler.idKey]);

    test('a step succeeds with its result, output and logs', async () => {
      const { ex, host } = await c.started();
      const job = jobFor(c.root(), 'ok', { resources: c.requested });
      const h = await ex.submit(job);
      expect(id(ex, h)).toMatch(/^\d+$/);
      const s = await host.final(h.jobId);
      expect(s).toMatchObject({ state: 'succeeded', exitCode: 0, result: { answer: 42, jobId: id(ex, h) } });
      expect(readFileSync(join(job.outputPath, 'done.txt'), 'utf8')).toBe(`hello from ${id(ex, h)}\n`);
      expect(readFileSync(job.logPaths.stdout, 'utf8')).toContain('ok step ran');
      const lines: string[] = [];
      for await (const line of ex.logs!(h, { follow: false })) lines.push(line);
      expect(lines.some((l) => l.includes('ok step ran'))).toBe(true);
      expect(ex.counters.submissions).toBe(1);
    });

    test('a non-zero exit fails with the exit code and the log tail', async () => {
      const { ex, host } = await c.started();
      const s = await host.final((await ex.submit(jobFor(c.root(), 'exit3'))).jobId);
      expect(s).toMatchObject({ state: 'failed', exitCode: 3, reason: 'exit code 3' });
      expect(hasCode(s.error, 'CAIRN_REMOTE')).toBe(true);
      expect(String((s.error as Error).message)).toContain('disk on fire');
    });

    test("a thrown error comes back with the step's name, message and code", async () => {
      const { ex, host } = await c.started();
      const s = await host.final((await ex.submit(jobFor(c.root(), 'throws'))).jobId);
      expect(s).toMatchObject({ state: 'failed', exitCode: 1, reason: 'E_FIXTURE' });
      expect(s.error).toMatchObject({ message: 'the step threw on purpose', code: 'E_FIXTURE' });
    });

    test('an outside cancel fails the step (CANCELLED) at the next status check', async () => {
      const { ex, host } = await c.started();
      const h = await ex.submit(jobFor(c.root(), 'sleepy'));
      await host.running(h.jobId);
      await c.cluster().externalCancel(id(ex, h));
      const before = ex.counters.statusQueries;
      const s = await host.final(h.jobId);
      expect(s).toMatchObject({ state: 'failed', reason: 'CANCELLED' });
      expect(hasCode(s.error, 'CAIRN_CANCELLED')).toBe(true);
      // Reported by the checks that follow the scheduler's own record of the end: the one in flight
      // plus the next, once the scheduler shows the job ended. A loaded node can keep a cancelled job
      // COMPLETING for KillWait (2 s here) first, which took 7 checks in one CI-like run of 4.
      expect(ex.counters.statusQueries - before).toBeLessThanOrEqual(12);
    });

    test('cancel() stops running and queued jobs with one request batch', async () => {
      const { ex, host } = await c.started();
      const a = await ex.submit(jobFor(c.root(), 'sleepy'));
      const b = await ex.submit(jobFor(c.root(), 'sleepy', { resources: c.queued })); // queued while `a` runs
      await host.running(a.jobId);
      await ex.cancel([a, b]);
      expect(ex.counters.cancellations).toBe(1);
      for (const h of [a, b]) expect(await host.final(h.jobId)).toMatchObject({ state: 'cancelled' });
    });

    test('an aborted job is cancelled by one request: the runner calls cancel(), the executor does not act on the signal too', async () => {
      const { ex, host } = await c.started();
      const ac = new AbortController();
      const h = await ex.submit(jobFor(c.root(), 'sleepy', { signal: ac.signal }));
      await host.running(h.jobId);
      const before = ex.counters.cancellations;
      // What the runner does when a step must stop (run/attempts.ts): abort the job's signal, then cancel its handle.
      ac.abort();
      await ex.cancel([h]);
      expect(await host.final(h.jobId)).toMatchObject({ state: 'cancelled' });
      expect(ex.counters.cancellations - before).toBe(1);
    });

    test('the walltime warning (USR2 before the time limit) reports TIMEOUT', async () => {
      const w = c.warning;
      const { ex, host } = await c.started({ walltimeGraceSeconds: w.graceSeconds });
      const job = jobFor(c.root(), 'sleepy', { resources: { timeLimit: w.timeLimit } });
      const s = await host.final((await ex.submit(job)).jobId, w.timeoutMs);
      expect(s).toMatchObject({ state: 'failed', reason: 'TIMEOUT' });
      expect(hasCode(s.error, 'CAIRN_TIMEOUT')).toBe(true);
      expect(readFileSync(join(job.attemptDir, 'exitcode'), 'utf8')).toMatch(/^\d+ USR2\n$/);
    }, c.warning.timeoutMs + 15_000);

    // Command steps: the job script runs the program itself. `nodePath` names no Node: a job that started one would fail.
    const noNode = { nodePath: '/nonexistent/node', workerEntry: '/nonexistent/worker-entry.js' };

    test('a command step runs python3 straight from its job script: result, output, logs', async () => {
      const { ex, host } = await c.started(noNode);
      const job = commandJobFor(c.root(), 'ok', { resources: c.requested });
      const h = await ex.submit(job);
      const s = await host.final(h.jobId);
      expect(s).toMatchObject({ state: 'succeeded', exitCode: 0, result: { answer: 42, attempt: 1, out: true } });
      expect(readFileSync(join(job.outputPath, 'done.txt'), 'utf8')).toBe(`python ran ${job.spec.name}\n`);
      const stdout = readFileSync(job.logPaths.stdout, 'utf8');
      // It ran in the project directory (declared sources and relative paths as on the runner's host).
      expect(stdout).toContain(`py step ran in ${GRID_PROGRAMS.replace(/\/$/, '')}`);
      expect(stdout).toContain('INFO metadata {"mode":"ok"}');
      expect(readFileSync(join(job.attemptDir, 'job.sh'), 'utf8')).not.toContain(noNode.nodePath);
    });

    test("a failing program fails the step with its exit code and stderr's last lines", async () => {
      const { ex, host } = await c.started(noNode);
      const s = await host.final((await ex.submit(commandJobFor(c.root(), 'fail'))).jobId);
      expect(s).toMatchObject({ state: 'failed', exitCode: 3, reason: 'exit code 3' });
      expect(hasCode(s.error, 'CAIRN_COMMAND_FAILED')).toBe(true);
      const message = String((s.error as Error).message);
      expect(message).toContain('python3 exited with code 3');
      expect(message).toContain('noise 29\ndisk on fire');
      expect(message).not.toContain('noise 10\n'); // the last 20 lines only
    });

    test('cancel() of a command step kills the program and what it started', async () => {
      const { ex, host } = await c.started(noNode);
      const job = commandJobFor(c.root(), 'sleepy');
      const h = await ex.submit(job);
      const pids = await jsonFile<number[]>(join(job.outputPath, 'pids'));
      expect(pids.every(alive)).toBe(true);
      await ex.cancel([h]);
      expect(await host.final(h.jobId)).toMatchObject({ state: 'cancelled' });
      await allGone(pids);
    });

    test("a new executor instance adopts a running command job and reads the program's result", async () => {
      const first = await c.started(noNode);
      const h = await first.ex.submit(commandJobFor(c.root(), 'nap'));
      await first.host.running(h.jobId);
      await first.ex.stop(); // the runner "restarts"
      const recorded = JSON.parse(JSON.stringify(h)) as typeof h; // as persisted in the step's record
      const second = await c.started(noNode);
      expect(await second.ex.adopt!(recorded)).toEqual(recorded);
      expect(await second.host.final(h.jobId)).toMatchObject({ state: 'succeeded', result: 'napped' });
      expect(second.ex.counters.submissions).toBe(0);
    });

    test('a new executor instance adopts a running job instead of resubmitting', async () => {
      const first = await c.started();
      const job = jobFor(c.root(), 'nap');
      const h = await first.ex.submit(job);
      await first.host.running(h.jobId);
      await first.ex.stop(); // the runner "restarts"
      const recorded = JSON.parse(JSON.stringify(h)) as typeof h; // as persisted in the step's record
      const second = await c.started();
      expect(await second.ex.adopt!(recorded)).toEqual(recorded);
      const s = await second.host.final(h.jobId);
      expect(s).toMatchObject({ state: 'succeeded', result: `napped in ${id(second.ex, h)}` });
      expect(second.ex.counters.submissions).toBe(0);
      expect((await c.cluster().jobs()).filter((j) => j.name.endsWith(job.task.nameWithHash) && j.id !== id(second.ex, h))).toEqual([]);
      // A job the scheduler never heard of is not adopted.
      const ghost = { ...recorded, jobId: 'ghost', info: { ...recorded.info, [second.ex.scheduler.idKey]: '999999', dir: join(c.root(), 'nowhere') } };
      expect(await second.ex.adopt!(ghost)).toBeNull();
    });
  });
}

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

    // A packed task of command steps is a shell loop: these name no Node and no pack worker, so a task that started one would fail.
    const noNode = { nodePath: '/nonexistent/node', packWorker: '/nonexistent/pack-worker.js' };

    test('packed command steps run one after another in one task, each with its own result, exit code and stderr tail', async () => {
      const { ex, host } = await h.started({ ...noNode, pack: { stepsPerTask: 3, maxWaitMs: 200 } });
      const jobs = (['ok', 'fail', 'ok'] as const).map((m) => commandJobFor(root(), m));
      const handles = await Promise.all(jobs.map((j) => ex.submit(j)));
      expect(ex.counters.submissions).toBe(1);
      expect(new Set(handles.map((x) => x.info[ex.scheduler.idKey])).size).toBe(1);
      const s = await Promise.all(handles.map((x) => host.final(x.jobId)));
      for (const i of [0, 2]) {
        expect(s[i]).toMatchObject({ state: 'succeeded', result: { answer: 42, attempt: 1, out: true } });
        expect(readFileSync(join(jobs[i]!.outputPath, 'done.txt'), 'utf8')).toBe(`python ran ${jobs[i]!.spec.name}\n`);
        expect(readFileSync(jobs[i]!.logPaths.stdout, 'utf8')).toContain('py step ran in');
      }
      expect(s[1]).toMatchObject({ state: 'failed', exitCode: 3, reason: 'exit code 3' });
      expect(hasCode(s[1]!.error, 'CAIRN_COMMAND_FAILED')).toBe(true);
      const message = String((s[1]!.error as Error).message);
      expect(message).toContain('python3 exited with code 3');
      expect(message).toContain('noise 29\ndisk on fire');
      expect(readFileSync(jobs[1]!.logPaths.stderr, 'utf8')).toContain('disk on fire');
      expect(readFileSync(jobs[0]!.logPaths.stderr, 'utf8')).not.toContain('disk on fire');
    });

    test('cancel() of a packed command step kills its program and what it started; the task goes on', async () => {
      const { ex, host } = await h.started({ ...noNode, pack: { stepsPerTask: 2, maxWaitMs: 100 } });
      const jobs = (['sleepy', 'ok'] as const).map((m) => commandJobFor(root(), m));
      const [a, b] = await Promise.all(jobs.map((j) => ex.submit(j)));
      const pids = await jsonFile<number[]>(join(jobs[0]!.outputPath, 'pids'));
      await ex.cancel([a!]);
      expect(await host.final(a!.jobId)).toMatchObject({ state: 'cancelled' });
      await allGone(pids);
      expect(await host.final(b!.jobId)).toMatchObject({ state: 'succeeded', result: { answer: 42 } });
    });

    test('cancelling every step of a packed task, or the task from outside, kills the programs it runs', async () => {
      const { ex, host } = await h.started({ ...noNode, pack: { stepsPerTask: 2, maxWaitMs: 100 } });
      const jobs = (['sleepy', 'sleepy'] as const).map((m) => commandJobFor(root(), m));
      const [a, b] = await Promise.all(jobs.map((j) => ex.submit(j)));
      const first = await jsonFile<number[]>(join(jobs[0]!.outputPath, 'pids'));
      await ex.cancel([a!, b!]);
      for (const x of [a!, b!]) expect(await host.final(x.jobId)).toMatchObject({ state: 'cancelled' });
      await allGone(first);
      // From outside: the scheduler's own cancel of the task (scancel, qdel).
      const outside = (['sleepy', 'ok'] as const).map((m) => commandJobFor(root(), m));
      const [c2] = await Promise.all(outside.map((j) => ex.submit(j)));
      const pids = await jsonFile<number[]>(join(outside[0]!.outputPath, 'pids'));
      await h.cluster().externalCancel(String(c2!.info[ex.scheduler.idKey]));
      expect(await host.final(c2!.jobId)).toMatchObject({ state: 'failed', reason: 'CANCELLED' });
      await allGone(pids);
    });

    test("a packed command step's own time limit stops its program as TIMEOUT; the next step runs", async () => {
      const { ex, host } = await h.started({ ...noNode, pack: { stepsPerTask: 2, maxWaitMs: 100 } });
      const jobs = (['sleepy', 'ok'] as const).map((m) => commandJobFor(root(), m, { resources: { timeLimit: 3 } }));
      const [a, b] = await Promise.all(jobs.map((j) => ex.submit(j)));
      const pids = await jsonFile<number[]>(join(jobs[0]!.outputPath, 'pids'));
      const s = await host.final(a!.jobId);
      expect(s).toMatchObject({ state: 'failed', reason: 'TIMEOUT' });
      expect(hasCode(s.error, 'CAIRN_TIMEOUT')).toBe(true);
      await allGone(pids);
      expect(await host.final(b!.jobId)).toMatchObject({ state: 'succeeded', result: { answer: 42 } });
    });

    const n = gridScale().packedSteps;
    test(`${n} tiny steps packed: few submissions, few status queries`, async () => {
      const { ex, host } = await h.started({ pack: {} });
      const began = Date.now();
      const handles = await Promise.all(Array.from({ length: n }, () => ex.submit(jobFor(root(), 'tiny'))));
      const statuses = await Promise.all(handles.map((x) => host.final(x.jobId, 240_000)));
      expect(statuses.filter((s) => s.state !== 'succeeded')).toEqual([]);
      console.info(`${label}: ${n} packed steps, ${ex.counters.submissions} submission(s), ${ex.counters.statusQueries} status queries, ${ex.counters.accountingQueries} accounting queries`);
      expect(ex.counters.submissions).toBeLessThanOrEqual(2);
      // One status query per poll interval for all steps, never one per step: bounded by the time the
      // run took over the poller's shortest interval (200 ms), which a loaded machine stretches (103
      // queries in a 76 s run at load 17 once broke a fixed n / 10).
      const elapsedMs = Date.now() - began;
      expect(ex.counters.statusQueries).toBeLessThanOrEqual(Math.ceil(elapsedMs / 200) + 10);
      expect(ex.counters.statusQueries).toBeLessThan(n / 2);
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
      // A pack whose steps all succeeded is removed when the run ends.
      const packRoot = join(prefix, '.cairn', 'grid', first.name);
      expect(existsSync(packRoot) ? readdirSync(packRoot) : []).toEqual([]);
      const second = h.make({ pack: { maxWaitMs: 200 } });
      const again = await new StepRunner({ prefix, executors: [second] }).run([pipeline(second.name)]);
      expect('counts' in again && again.counts).toEqual({ cached: 1 });
      expect(second.counters.submissions).toBe(0);
    }, 90_000);

    test("a Node step's usage, alone and packed: measured on the node by its worker (no sacct/qacct needed), GPU from nvidia-smi on the job's PATH", async () => {
      const path = process.env.PATH;
      // The job inherits the submitting environment (sbatch --export=ALL, qsub -V): the fake is first on its PATH.
      process.env.PATH = `${writeFakeNvidiaSmi(join(h.state.root, 'gpu'), { marker: 'cairn-usage-hog', usedMiB: 512, utilization: 75 })}${delimiter}${path ?? ''}`;
      try {
        for (const packed of [false, true]) {
          const prefix = join(h.state.root, `usage-${packed ? 'packed' : 'single'}`);
          const ex = h.make(packed ? { pack: { maxWaitMs: 300 } } : {});
          const hog = (name: string) => new StepSpec({ name, executor: ex.name, ref: { module: GRID_STEPS, export: 'hog' }, resources: { cpu: 1, timeLimit: 120 } });
          const steps = packed ? [hog('hog-a'), hog('hog-b')] : [hog('hog')];
          const summary = await new StepRunner({ prefix, executors: [ex] }).run(steps);
          expect('counts' in summary && summary.counts).toEqual({ succeeded: steps.length });
          for (const step of steps) {
            const usage = await readUsage(join(step.outputPath(prefix), '.cairn', 'attempt-1'));
            expect(usage, `${step.name} (${packed ? 'packed' : 'alone'})`).toMatchObject({ executor: scheduler(), cpuScope: 'tree', memoryKind: 'rss', exitCode: 0, gpuPeakMemoryBytes: 512 * 2 ** 20, gpuUtilizationPercent: 75 });
            expect(usage!.cpuMs!).toBeGreaterThanOrEqual(500);
            // Alone, the worker's tree; packed, the step's subprocesses (the worker's own peak spans the task).
            expect(packed ? usage!.childPeakRssBytes! : usage!.peakMemoryBytes!).toBeGreaterThanOrEqual(150 * 2 ** 20);
          }
        }
      } finally {
        process.env.PATH = path;
      }
    }, 120_000);

    test("command steps' usage, alone and packed: the job's shell wrapper measures the program (times, ps, awk)", async () => {
      const hogProgram = fileURLToPath(new URL('./usage-hog.mjs', import.meta.url));
      const hog = (name: string, executor: string) => command({ name, version: 'v1', executor, program: process.execPath, args: [hogProgram, OUT, '200', '1000', 'cairn-usage-hog'], dir: h.state.root, resources: { cpu: 1, timeLimit: 120 } }).lower();
      for (const packed of [false, true]) {
        const prefix = join(h.state.root, `usage-cmd-${packed ? 'packed' : 'single'}`);
        const ex = h.make(packed ? { pack: { maxWaitMs: 300 } } : {});
        const steps = packed ? [hog('hog-a', ex.name), hog('hog-b', ex.name)] : [hog('hog-single', ex.name)];
        const summary = await new StepRunner({ prefix, executors: [ex] }).run(steps);
        expect('counts' in summary && summary.counts).toEqual({ succeeded: steps.length });
        for (const step of steps) {
          const usage = await readUsage(join(step.outputPath(prefix), '.cairn', 'attempt-1'));
          expect(usage, `${step.name} (${packed ? 'packed' : 'alone'})`).toMatchObject({ executor: scheduler(), cpuScope: 'tree', memoryScope: 'tree', exitCode: 0, sampleIntervalMs: 1000 });
          expect(usage!.cpuMs!).toBeGreaterThanOrEqual(500);
          expect(usage!.peakMemoryBytes!).toBeGreaterThanOrEqual(150 * 2 ** 20);
          expect(usage).not.toHaveProperty('gpuPeakMemoryBytes');
        }
      }
    }, 120_000);

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
        const jobFiles = steps.map((s) => localLayout.jobFile(s.outputPath(prefix)));
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
