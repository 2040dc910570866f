/**
 * The job side of packing, for real: a packed task's wrapper run by bash with the built pack
 * worker and real step functions, the way a compute node runs it (no scheduler involved: the
 * array index is set in the environment). Checks every step's own exit code, result and logs.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { jobFor, tempRoot } from '../../../tools/testenv/grid-jobs.js';
import { decodeResult } from '../src/runner-api.js';
import { jobFiles, packFiles, packPolicy, packWorkerPath, parseExitFile, type GridScheduler, type SubmitRequest } from '../src/index.js';
import { submitArray, type GridCounters } from '../src/submission.js';
import type { JobRequest } from '../src/runner-api.js';

const root = tempRoot();
const TASK_VAR = 'CAIRN_TEST_TASK';

/** Captures the submission instead of sending it anywhere: these tests run the script themselves. */
function capture(): GridScheduler & { requests: SubmitRequest[] } {
  const requests: SubmitRequest[] = [];
  return {
    requests,
    name: 'test',
    label: 'Test',
    idKey: 'testJobId',
    transport: 'none',
    arrayTaskVar: TASK_VAR,
    enforcedLimit: (s) => s,
    async submit(r) {
      requests.push(r);
      return '7';
    },
    taskId: (a, i) => `${a}.${i}`,
    query: async () => new Map(),
    finished: async () => new Map(),
    cancel: async () => undefined,
  };
}

const counters = (): GridCounters => ({ submissions: 0, steps: 0, statusQueries: 0, accountingQueries: 0, cancellations: 0 });

/** Writes a pack of `jobs` in `tasks` tasks of the given sizes; returns its directory and script. */
async function pack(jobs: JobRequest[], sizes: number[], extra: { nodePath?: string } = {}): Promise<{ dir: string; script: string }> {
  const scheduler = capture();
  const ctx = { scheduler, name: 'test', options: { nodePath: extra.nodePath, packWorker: packWorkerPath(), workdir: root }, counters: counters(), limit: <T>(fn: () => Promise<T>) => fn() };
  let next = 0;
  const tasks = sizes.map((n) => ({ steps: Array.from({ length: n }, () => next++), timeLimit: undefined }));
  await submitArray(ctx, jobs, tasks, join(root, 'packs'));
  const request = scheduler.requests[0] as SubmitRequest;
  return { dir: request.outputDir, script: request.scriptPath };
}

/** Runs task `k` of a pack as a compute node would; `onStart` may signal the wrapper. */
function runTask(script: string, k: number, onStart?: (signal: (s: NodeJS.Signals) => void) => void): Promise<number | null> {
  return new Promise((resolve) => {
    const child = spawn('bash', [script], { env: { ...process.env, [TASK_VAR]: String(k) }, stdio: 'ignore' });
    onStart?.((s) => child.kill(s));
    child.on('exit', (code) => resolve(code));
  });
}

async function until(path: string): Promise<void> {
  while (!existsSync(path)) await new Promise((r) => setTimeout(r, 50));
}

const exitOf = (job: JobRequest) => parseExitFile(readFileSync(jobFiles(job.attemptDir).exit, 'utf8'));
const resultOf = (job: JobRequest) => decodeResult(readFileSync(jobFiles(job.attemptDir).result));

beforeAll(() => {
  if (!existsSync(packWorkerPath())) throw new Error(`${packWorkerPath()} is missing: build @cairn/grid first (npx tsup in packages/grid).`);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('a packed task on a node', () => {
  test('each step gets its own exit code, result and logs; a step that exits or throws fails only itself', async () => {
    const jobs = ['tiny', 'chatty', 'exit3', 'throws', 'chatty'].map((e) => jobFor(root, e));
    const { dir, script } = await pack(jobs, [5]);
    expect(await runTask(script, 1)).toBe(0);
    expect(jobs.map(exitOf)).toEqual([
      { code: 0, signal: null },
      { code: 0, signal: null },
      { code: 3, signal: null },
      { code: 1, signal: null },
      { code: 0, signal: null },
    ]);
    const [tiny, chatty, exit3, throws, chatty2] = jobs as [JobRequest, JobRequest, JobRequest, JobRequest, JobRequest];
    expect(resultOf(tiny)).toEqual({ ok: true, result: tiny.outputPath.length });
    expect(resultOf(chatty2)).toEqual({ ok: true, result: chatty2.spec.name });
    expect(existsSync(jobFiles(exit3.attemptDir).result)).toBe(false);
    expect(resultOf(throws)).toMatchObject({ ok: false, error: { message: 'the step threw on purpose', code: 'E_FIXTURE' } });
    // Output of a step lands in its own logs only.
    const out = readFileSync(chatty.logPaths.stdout, 'utf8');
    const err = readFileSync(chatty.logPaths.stderr, 'utf8');
    expect(out).toBe(`console line of ${chatty.spec.name}\n`);
    expect(err).toContain(`console error of ${chatty.spec.name}`);
    expect(err).toContain(`WARN ctx line of ${chatty.spec.name}`);
    expect(readFileSync(exit3.logPaths.stderr, 'utf8')).toBe('about to fail: disk on fire\n');
    expect(readFileSync(chatty2.logPaths.stdout, 'utf8')).not.toContain(chatty.spec.name);
    expect(readFileSync(packFiles(dir).done(1), 'utf8').split('\n').filter(Boolean).sort()).toEqual(['0', '1', '2', '3', '4']);
    for (const j of jobs) expect(existsSync(jobFiles(j.attemptDir).begin)).toBe(true);
  });

  test('tasks of one array run their own steps', async () => {
    const jobs = Array.from({ length: 4 }, () => jobFor(root, 'tiny'));
    const { script } = await pack(jobs, [2, 2]);
    expect(await runTask(script, 2)).toBe(0);
    expect(jobs.map((j) => existsSync(jobFiles(j.attemptDir).exit))).toEqual([false, false, true, true]);
    expect(await runTask(script, 1)).toBe(0);
    expect(jobs.map(exitOf)).toEqual(Array(4).fill({ code: 0, signal: null }));
  });

  test('a cancel file skips a step that has not started and stops one that runs', async () => {
    const jobs = [jobFor(root, 'sleepy'), jobFor(root, 'tiny'), jobFor(root, 'tiny')];
    const { dir, script } = await pack(jobs, [3]);
    const files = packFiles(dir);
    writeFileSync(files.cancel(1, 1), '');
    const running = runTask(script, 1);
    await until(join(jobs[0]!.outputPath, 'started.txt'));
    writeFileSync(files.cancel(1, 0), '');
    expect(await running).toBe(0);
    expect(jobs.map(exitOf)).toEqual([{ code: 143, signal: 'TERM' }, { code: 143, signal: 'TERM', unstarted: true }, { code: 0, signal: null }]);
    expect(resultOf(jobs[0]!)).toMatchObject({ ok: false, error: { code: 'CAIRN_CANCELLED' } });
    expect(existsSync(jobFiles(jobs[1]!.attemptDir).begin)).toBe(false);
  });

  test("a step's own time limit stops it as a walltime warning would (USR2); one that ignores it is abandoned", async () => {
    const limited = { timeLimit: 1 };
    const jobs = [jobFor(root, 'sleepy', { resources: limited }), jobFor(root, 'stubborn', { resources: limited }), jobFor(root, 'tiny')];
    const { script } = await pack(jobs, [3]);
    const t0 = Date.now();
    expect(await runTask(script, 1)).toBe(0);
    expect(jobs.map(exitOf)).toEqual([{ code: 143, signal: 'USR2' }, { code: 143, signal: 'USR2' }, { code: 0, signal: null }]);
    expect(resultOf(jobs[0]!)).toMatchObject({ ok: false, error: { code: 'CAIRN_TIMEOUT' } });
    // 1 s + 1 s + the 2 s grace of the step that would not stop, and a restarted worker.
    expect(Date.now() - t0).toBeLessThan(15_000);
  });

  test('a walltime warning to the task stops the running step and marks the rest unstarted', async () => {
    const jobs = [jobFor(root, 'tiny'), jobFor(root, 'sleepy'), jobFor(root, 'tiny'), jobFor(root, 'tiny')];
    const { script } = await pack(jobs, [4]);
    let signal: (s: NodeJS.Signals) => void = () => undefined;
    const running = runTask(script, 1, (send) => (signal = send));
    await until(join(jobs[1]!.outputPath, 'started.txt'));
    signal('SIGUSR2');
    expect(await running).toBe(143);
    expect(jobs.map(exitOf)).toEqual([
      { code: 0, signal: null },
      { code: 143, signal: 'USR2' },
      { code: 143, signal: 'USR2', unstarted: true },
      { code: 143, signal: 'USR2', unstarted: true },
    ]);
  });

  test('a worker that cannot start leaves its exit code for the whole task', async () => {
    const jobs = [jobFor(root, 'tiny'), jobFor(root, 'tiny')];
    const { dir, script } = await pack(jobs, [2], { nodePath: join(root, 'no-such-node') });
    expect(await runTask(script, 1)).toBe(127);
    expect(parseExitFile(readFileSync(packFiles(dir).taskExit(1), 'utf8'))).toEqual({ code: 127, signal: null });
    expect(existsSync(jobFiles(jobs[0]!.attemptDir).exit)).toBe(false);
  });
});

test('packPolicy rejects bad limits with CAIRN_CONFIG', () => {
  expect(() => packPolicy({ stepsPerTask: 0 })).toThrow(expect.objectContaining({ code: 'CAIRN_CONFIG' }));
  expect(() => packPolicy({ maxStepSeconds: 100, maxTaskSeconds: 50 })).toThrow(/maxStepSeconds/);
});
