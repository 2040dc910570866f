import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { apply, CairnError, hasCode, lower, makeTask, OUT, StepSpec } from '@cairn/core';
import type { Executor, ExecutorHost, JobRequest, JobStatus } from '../src/executor/contract.js';
import { createProcessExecutor, createThreadsExecutor } from '../src/executors/local.js';
import { combine, produce } from './fixtures/steps.mjs';

const FIXTURE = new URL('./fixtures/steps.mjs', import.meta.url).href;
const TERMINAL = new Set(['succeeded', 'failed', 'cancelled', 'lost']);

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cairn-local-exec-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A host whose `done(jobId)` resolves with the job's first terminal status. */
function testHost(): ExecutorHost & { done(jobId: string): Promise<JobStatus>; errors: string[] } {
  const waiters = new Map<string, { promise: Promise<JobStatus>; resolve: (s: JobStatus) => void }>();
  const waiter = (id: string) => {
    let w = waiters.get(id);
    if (!w) {
      let resolve!: (s: JobStatus) => void;
      const promise = new Promise<JobStatus>((r) => (resolve = r));
      w = { promise, resolve };
      waiters.set(id, w);
    }
    return w;
  };
  const errors: string[] = [];
  return {
    prefix: dir,
    client: undefined,
    errors,
    logger: { info: () => {}, warn: () => {}, error: (m) => errors.push(m) },
    report: (id, status) => {
      if (TERMINAL.has(status.state)) waiter(id).resolve(status);
    },
    done: (id) => waiter(id).promise,
  };
}

let counter = 0;
function pathSpec(exportName: string): StepSpec {
  counter += 1;
  return new StepSpec({ name: `${exportName}-${counter}`, ref: { module: FIXTURE, export: exportName }, hashAttrs: { n: counter } });
}

function jobFor(spec: StepSpec, init: { signal?: AbortSignal; depPaths?: Record<string, string>; depResults?: Record<string, unknown> } = {}): JobRequest {
  const outputPath = join(dir, 'store', spec.nameWithHash);
  const attemptDir = join(dir, 'attempts', `${spec.nameWithHash}.1`);
  const logPaths = { stdout: join(attemptDir, 'stdout.log'), stderr: join(attemptDir, 'stderr.log') };
  // Results not recorded (as for a kind with save): the fixtures return Maps to show how each executor carries a value back.
  const { recordsResult: _, ...task } = makeTask(spec, { outputPath, depPaths: init.depPaths ?? {}, depResults: init.depResults ?? {}, attempt: 1 });
  return {
    jobKey: `${spec.nameWithHash}.1`,
    spec,
    task,
    outputPath,
    finalPath: outputPath,
    resources: {},
    logPaths,
    attemptDir,
    signal: init.signal ?? new AbortController().signal,
  };
}

/** Waits until `check()` holds (for events outside our control, like another process writing a file). */
async function until(check: () => boolean, what: string, limitMs = 15_000): Promise<void> {
  const end = Date.now() + limitMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}`);
    await sleep(20);
  }
}

const logHas = (job: JobRequest, text: string) => () => existsSync(job.logPaths.stdout) && readFileSync(job.logPaths.stdout, 'utf8').includes(text);

/** True when the process no longer exists (or is a zombie nobody has reaped yet). */
function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z') ?? false;
  } catch {
    return true;
  }
}

const factories: [string, () => Executor][] = [
  ['threads', () => createThreadsExecutor({ maxThreads: 4, cancelGraceMs: 500 })],
  ['process', () => createProcessExecutor({ killGraceMs: 500 })],
];

describe.each(factories)('%s executor', (name, create) => {
  let executor: Executor;
  let host: ReturnType<typeof testHost>;
  beforeAll(async () => {
    executor = create();
    host = testHost();
    await executor.start(host);
  });
  afterAll(async () => {
    await executor.stop();
  });
  afterEach(() => {
    expect(host.errors).toEqual([]);
  });

  it('declares its capabilities as data', () => {
    expect(executor.name).toBe(name);
    expect(executor.capabilities).toMatchObject({ remote: false, sharedFs: true, deploysCode: false, inProcess: false, logs: true, resumable: false });
    expect(executor.capabilities.cancel).toBe(name === 'process' ? 'reliable' : 'best-effort');
  });

  it('runs a step: files in the output path, the returned value, log lines in the attempt’s files', async () => {
    const job = jobFor(pathSpec('writeFiles'));
    const handle = await executor.submit(job);
    expect(handle).toMatchObject({ jobId: job.jobKey, executor: name });
    const status = await host.done(handle.jobId);
    expect(status.state).toBe('succeeded');
    expect(status.result).toEqual({ files: ['out.txt'], attempt: 1, sizes: new Map([['out.txt', 1]]), when: new Date(0) });
    expect(await readFile(join(job.outputPath, 'out.txt'), 'utf8')).toBe(`hello from ${job.task.name} attempt 1\n`);
    expect(await readFile(job.logPaths.stdout, 'utf8')).toBe(`[${job.task.name}] INFO wrote out.txt\n`);
    expect(await readFile(job.logPaths.stderr, 'utf8')).toBe(`[${job.task.name}] WARN a warning\n[${job.task.name}] WARN over two lines\n`);
    const lines: string[] = [];
    for await (const line of executor.logs!(handle, { follow: false })) lines.push(line);
    expect(lines).toEqual([`[${job.task.name}] INFO wrote out.txt`, `[${job.task.name}] WARN a warning`, `[${job.task.name}] WARN over two lines`]);
  });

  it('reports a failure with the error’s message and code preserved', async () => {
    const job = jobFor(pathSpec('fail'));
    const status = await host.done((await executor.submit(job)).jobId);
    expect(status.state).toBe('failed');
    expect(status.error).toBeInstanceOf(Error);
    expect(status.error).toMatchObject({ message: 'fixture failure: the input was bad', code: 'E_FIXTURE' });
    expect((status.error as Error).stack).toContain('steps.mjs');
    expect(status.reason).toBe('E_FIXTURE');
  });

  it('reports CAIRN_FN_REF with the module path for a bad reference', async () => {
    const job = jobFor(pathSpec('noSuchExport'));
    const status = await host.done((await executor.submit(job)).jobId);
    expect(status.state).toBe('failed');
    expect(hasCode(status.error, 'CAIRN_FN_REF')).toBe(true);
    expect((status.error as Error).message).toContain(FIXTURE);
  });

  it('runs an apply step lowered from apply(), resolving dependency slots and OUT', async () => {
    const up = apply({ name: 'up', version: 'v1', fn: produce, inputs: { out: OUT } });
    const down = apply({ name: `down-${name}`, version: 'v1', fn: combine, inputs: { data: { path: up }, out: OUT, suffix: name } });
    const spec = lower(down);
    const upKey = (spec.deps[0] as StepSpec).nameWithHash;
    const upDir = join(dir, 'store', upKey);
    await mkdir(upDir, { recursive: true });
    await writeFile(join(upDir, 'data.txt'), 'upstream\n');
    const job = jobFor(spec, { depPaths: { [upKey]: upDir }, depResults: { [upKey]: 'produced' } });
    const status = await host.done((await executor.submit(job)).jobId);
    expect(status).toMatchObject({ state: 'succeeded', result: { inputs: { data: { path: upDir }, out: job.outputPath, suffix: name }, depResults: { [upKey]: 'produced' } } });
    expect(await readFile(join(job.outputPath, 'combined.txt'), 'utf8')).toBe(`upstream+${name}`);
  });

  it('stops a step when its signal aborts (timeout) and reports cancelled with the reason', async () => {
    const controller = new AbortController();
    const job = jobFor(pathSpec('waitForAbort'), { signal: controller.signal });
    const handle = await executor.submit(job);
    await until(logHas(job, 'waiting for abort'), 'the step to start');
    expect((await executor.poll([handle])).get(handle.jobId)).toEqual({ state: 'running' });
    controller.abort(new CairnError('CAIRN_TIMEOUT', 'timed out', { step: job.task.name }));
    const status = await host.done(handle.jobId);
    expect(status).toMatchObject({ state: 'cancelled', reason: 'CAIRN_TIMEOUT' });
    // The step saw ctx.signal abort and stopped by itself (it writes this file before throwing).
    expect(existsSync(join(job.outputPath, 'aborted.txt'))).toBe(true);
  });

  it('follows a running job’s log until the job ends', async () => {
    const job = jobFor(pathSpec('waitForAbort'));
    const handle = await executor.submit(job);
    const lines: string[] = [];
    for await (const line of executor.logs!(handle, { follow: true })) {
      lines.push(line);
      if (line.endsWith('waiting for abort')) await executor.cancel([handle]);
    }
    expect(lines[0]).toBe(`[${job.task.name}] INFO waiting for abort`);
    expect(await host.done(handle.jobId)).toMatchObject({ state: 'cancelled', reason: 'CAIRN_CANCELLED' });
  });

  it('cancels a step that ignores its signal', async () => {
    const job = jobFor(pathSpec('spin'));
    const handle = await executor.submit(job);
    await executor.cancel([handle]);
    expect(await host.done(handle.jobId)).toMatchObject({ state: 'cancelled' });
  });
});

describe('process executor', () => {
  it('kills the whole process group on cancel: a grandchild that ignores SIGTERM is gone too', async () => {
    const executor = createProcessExecutor({ killGraceMs: 300 });
    const host = testHost();
    await executor.start(host);
    try {
      const job = jobFor(pathSpec('spawnGrandchild'));
      const handle = await executor.submit(job);
      const pidFile = join(job.outputPath, 'grandchild.pid');
      await until(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').length > 0, 'the grandchild to start');
      const grandchild = Number(readFileSync(pidFile, 'utf8'));
      expect(isGone(grandchild)).toBe(false);
      await executor.cancel([handle]);
      expect(await host.done(handle.jobId)).toMatchObject({ state: 'cancelled', reason: 'CAIRN_CANCELLED' });
      await until(() => isGone(grandchild), `grandchild ${grandchild} to be killed`);
      expect(isGone(handle.info.pid as number)).toBe(true);
    } finally {
      await executor.stop();
    }
  });

  it('writes the task to the attempt directory and the raw output to the log files', async () => {
    const executor = createProcessExecutor({ env: { CAIRN_TEST_ENV: 'yes' } });
    const host = testHost();
    await executor.start(host);
    try {
      const job = jobFor(pathSpec('printRaw'));
      const handle = await executor.submit(job);
      expect(await host.done(handle.jobId)).toMatchObject({ state: 'succeeded', result: 'printed', exitCode: 0 });
      expect(existsSync(join(job.attemptDir, 'task.msgpack'))).toBe(true);
      expect(await readFile(job.logPaths.stdout, 'utf8')).toBe(`raw stdout of ${job.task.name}\n`);
      // After the job, poll reads the result file.
      expect((await executor.poll([handle])).get(handle.jobId)).toMatchObject({ state: 'succeeded', result: 'printed' });
    } finally {
      await executor.stop();
    }
  });

  it('reports a worker that dies without a result as failed, with the exit code and stderr tail', async () => {
    // A node option that makes the worker fail before it can write a result.
    const executor = createProcessExecutor({ nodeArgs: ['--require', join(dir, 'no-such-preload.cjs')] });
    const host = testHost();
    await executor.start(host);
    try {
      const job = jobFor(pathSpec('writeFiles'));
      const status = await host.done((await executor.submit(job)).jobId);
      expect(status.state).toBe('failed');
      expect(status.exitCode).toBe(1);
      expect(hasCode(status.error, 'CAIRN_EXECUTOR')).toBe(true);
      expect((status.error as Error).message).toContain('no-such-preload.cjs');
    } finally {
      await executor.stop();
    }
  });
});

describe('threads executor', () => {
  it('reports a step’s own AbortError after a cancel as cancelled, keeping the thread pool usable', async () => {
    const executor = createThreadsExecutor({ maxThreads: 1 });
    const host = testHost();
    await executor.start(host);
    try {
      const first = jobFor(pathSpec('waitForAbort'));
      const handle = await executor.submit(first);
      await until(logHas(first, 'waiting for abort'), 'the step to start');
      await executor.cancel([handle]);
      expect(await host.done(handle.jobId)).toMatchObject({ state: 'cancelled' });
      expect(await readFile(join(first.outputPath, 'aborted.txt'), 'utf8')).toBe('CAIRN_CANCELLED');
      const second = jobFor(pathSpec('writeFiles'));
      expect(await host.done((await executor.submit(second)).jobId)).toMatchObject({ state: 'succeeded' });
    } finally {
      await executor.stop();
    }
  });
});

describe('stop()', () => {
  it('leaves nothing that keeps the process alive (a child script using both executors exits by itself)', async () => {
    const runner = pathToFileURL(fileURLToPath(new URL('../dist/index.js', import.meta.url))).href;
    const core = pathToFileURL(fileURLToPath(new URL('../../core/dist/index.js', import.meta.url))).href;
    const script = join(dir, 'uses-executors.mjs');
    await writeFile(
      script,
      `
import { StepSpec, makeTask } from ${JSON.stringify(core)};
import { createProcessExecutor, createThreadsExecutor } from ${JSON.stringify(runner)};
const dir = ${JSON.stringify(join(dir, 'child'))};
const done = new Map();
// Results not recorded (as for a kind with save): writeFiles returns a Map.
const taskOf = (spec, init) => { const { recordsResult, ...task } = makeTask(spec, init); return task; };
const host = { prefix: dir, client: undefined, logger: console, report: (id, s) => { if (s.state !== 'running') done.get(id)?.(s); } };
const run = async (executor, exportName, cancel) => {
  const spec = new StepSpec({ name: exportName + '-' + executor.name, ref: { module: ${JSON.stringify(FIXTURE)}, export: exportName } });
  const attemptDir = dir + '/' + spec.nameWithHash;
  const finished = new Promise((r) => done.set(spec.nameWithHash + '.1', r));
  const job = { jobKey: spec.nameWithHash + '.1', spec, task: taskOf(spec, { outputPath: attemptDir + '/out', depPaths: {}, attempt: 1 }),
    outputPath: attemptDir + '/out', prefix: dir, resources: {}, logPaths: { stdout: attemptDir + '/o.log', stderr: attemptDir + '/e.log' }, attemptDir,
    signal: new AbortController().signal };
  const handle = await executor.submit(job);
  if (cancel) await executor.cancel([handle]);
  return (await finished).state;
};
const states = [];
for (const executor of [createThreadsExecutor({ minThreads: 2, maxThreads: 2 }), createProcessExecutor()]) {
  await executor.start(host);
  states.push(await run(executor, 'writeFiles', false), await run(executor, 'leaveTimer', false), await run(executor, 'waitForAbort', true));
  // A job still running when stop() is called.
  const spec = new StepSpec({ name: 'left-' + executor.name, ref: { module: ${JSON.stringify(FIXTURE)}, export: 'spin' } });
  await executor.submit({ jobKey: 'left.1', spec, task: taskOf(spec, { outputPath: dir + '/left-' + executor.name, depPaths: {}, attempt: 1 }),
    outputPath: dir + '/left', prefix: dir, resources: {}, logPaths: { stdout: dir + '/left.o', stderr: dir + '/left.e' }, attemptDir: dir + '/left',
    signal: new AbortController().signal });
  await executor.stop();
}
console.log(states.join(','));
`,
    );
    const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    // If a handle were left open the script would never exit; fail instead of hanging.
    const guard = setTimeout(() => child.kill('SIGKILL'), 25_000);
    const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
    clearTimeout(guard);
    expect({ code, signal, out }).toEqual({ code: 0, signal: null, out: 'succeeded,succeeded,cancelled,succeeded,succeeded,cancelled\n' });
  });
});
