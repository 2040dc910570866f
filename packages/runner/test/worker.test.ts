import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apply, CairnError, encodeTask, hasCode, lower, makeTask, OUT, StepSpec, type StepLogger, type TaskPayload } from '@cairn/core';
import { runTask, workerEntryPath } from '../src/executors/local.js';
import { decodeResult, encodeResult, failure, rebuildError, type WorkerResult } from '../src/worker/result.js';
import { combine, produce } from './fixtures/steps.mjs';

const FIXTURE = new URL('./fixtures/steps.mjs', import.meta.url).href;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cairn-worker-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/**
 * A payload whose result the runner does not record (as for a kind with save, whose value need
 * not be JSON), so these tests see how the worker itself carries any value back (a Map, a symbol).
 */
function pathTask(exportName: string, module = FIXTURE): TaskPayload {
  const spec = new StepSpec({ name: `w-${exportName}`, ref: { module, export: exportName }, hashAttrs: { exportName, module } });
  const { recordsResult: _, ...task } = makeTask(spec, { outputPath: join(dir, 'out', spec.nameWithHash), depPaths: {}, attempt: 2 });
  return task;
}

function memoryLog(): StepLogger & { lines: string[] } {
  const lines: string[] = [];
  return { lines, info: (m) => lines.push(`info ${m}`), warn: (m) => lines.push(`warn ${m}`), error: (m) => lines.push(`error ${m}`) };
}

describe('runTask', () => {
  it('runs a path step: creates the output directory, passes the context, returns the value', async () => {
    const task = pathTask('writeFiles');
    const log = memoryLog();
    const result = (await runTask(task, { signal: new AbortController().signal, log })) as { files: string[]; attempt: number; sizes: Map<string, number> };
    expect(result.files).toEqual(['out.txt']);
    expect(result.attempt).toBe(2);
    expect(result.sizes.get('out.txt')).toBe(1);
    expect(await readFile(join(task.outputPath, 'out.txt'), 'utf8')).toBe('hello from w-writeFiles attempt 2\n');
    expect(log.lines).toEqual(['info wrote out.txt', 'warn a warning\nover two lines']);
  });

  it('resolves an apply step’s inputs: dependency slots become dependency paths, OUT the output path', async () => {
    const up = apply({ name: 'up', version: 'v1', fn: produce, inputs: { out: OUT } });
    const down = apply({ name: 'down', version: 'v1', fn: combine, inputs: { data: { path: up }, out: OUT, suffix: 'x' } });
    const spec = lower(down);
    expect(spec.ref).toEqual({ module: FIXTURE, export: 'combine' });
    const upKey = (spec.deps[0] as StepSpec).nameWithHash;
    const upDir = join(dir, 'deps', upKey);
    await mkdir(upDir, { recursive: true });
    await writeFile(join(upDir, 'data.txt'), 'upstream\n');
    const outputPath = join(dir, 'out', spec.nameWithHash);
    const task = makeTask(spec, { outputPath, depPaths: { [upKey]: upDir }, depResults: { [upKey]: 'produced' }, attempt: 1 });
    const result = await runTask(task, { signal: new AbortController().signal, log: memoryLog() });
    expect(result).toEqual({ inputs: { data: { path: upDir }, out: outputPath, suffix: 'x' }, depResults: { [upKey]: 'produced' } });
    expect(await readFile(join(outputPath, 'combined.txt'), 'utf8')).toBe('upstream+x');
  });

  it('gives ctx.resources from the options over the task’s', async () => {
    const spec = new StepSpec({ name: 'res', ref: { module: FIXTURE, export: 'writeFiles' }, resources: { cpu: 2 } });
    const task = makeTask(spec, { outputPath: join(dir, 'out', 'res'), depPaths: {}, attempt: 1 });
    expect(task.resources).toEqual({ cpu: 2 });
    const seen: unknown[] = [];
    const log: StepLogger = { info: () => {}, warn: () => {}, error: () => {} };
    // A step module written on the fly that returns its context's resources.
    const mod = join(dir, 'ctx-step.mjs');
    await writeFile(mod, 'export const show = (out, ctx) => ({ resources: ctx.resources, name: ctx.name, client: ctx.client });');
    const showTask: TaskPayload = { ...task, ref: { module: `file://${mod}`, export: 'show' } };
    seen.push(await runTask(showTask, { signal: new AbortController().signal, log, client: 'the-client', resources: { cpu: 1, gpuIndices: [3] } }));
    seen.push(await runTask(showTask, { signal: new AbortController().signal, log }));
    expect(seen).toEqual([
      { resources: { cpu: 1, gpuIndices: [3] }, name: 'res', client: 'the-client' },
      { resources: { cpu: 2 }, name: 'res', client: undefined },
    ]);
  });

  it('refuses an unrecordable result in a payload built with makeTask, as in one the runner builds', async () => {
    const spec = new StepSpec({ name: 'w-map', ref: { module: FIXTURE, export: 'writeFiles' }, hashAttrs: { map: true } });
    const task = makeTask(spec, { outputPath: join(dir, 'out', spec.nameWithHash), depPaths: {}, attempt: 1 });
    await expect(runTask(task, { signal: new AbortController().signal, log: memoryLog() })).rejects.toMatchObject({ code: 'CAIRN_UNRECORDABLE_RESULT', step: 'w-map' });
  });

  it('throws CAIRN_FN_REF naming the module when the export is missing', async () => {
    const err = await runTask(pathTask('noSuchExport'), { signal: new AbortController().signal, log: memoryLog() }).catch((e: unknown) => e);
    expect(hasCode(err, 'CAIRN_FN_REF')).toBe(true);
    expect((err as Error).message).toContain(FIXTURE);
    expect((err as Error).message).toContain('"noSuchExport"');
  });

  it('throws CAIRN_FN_REF naming the module when it cannot be imported', async () => {
    const missing = new URL('./fixtures/missing.mjs', import.meta.url).href;
    const err = await runTask(pathTask('writeFiles', missing), { signal: new AbortController().signal, log: memoryLog() }).catch((e: unknown) => e);
    expect(hasCode(err, 'CAIRN_FN_REF')).toBe(true);
    expect((err as Error).message).toContain(missing);
  });
});

interface EntryRun {
  code: number | null;
  stdout: string;
  stderr: string;
  result: WorkerResult | undefined;
}

/** Runs the built worker entry; `onStdout` may act (e.g. signal it) once a line appears. */
async function runEntry(args: string[], resultPath: string, onStdout?: (text: string, pid: number) => void): Promise<EntryRun> {
  const child = spawn(process.execPath, [workerEntryPath(), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
    onStdout?.(stdout, child.pid as number);
  });
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const [code] = (await once(child, 'close')) as [number | null];
  const result = existsSync(resultPath) ? decodeResult(await readFile(resultPath)) : undefined;
  return { code, stdout, stderr, result };
}

async function entryWith(exportName: string, onStdout?: (text: string, pid: number) => void): Promise<EntryRun> {
  const task = pathTask(exportName);
  const taskPath = join(dir, `${exportName}.task.msgpack`);
  const resultPath = join(dir, `${exportName}.result.msgpack`);
  await writeFile(taskPath, encodeTask(task));
  return runEntry(['--task', taskPath, '--result', resultPath], resultPath, onStdout);
}

describe('worker entry (dist/worker-entry.js)', () => {
  it('is built where workerEntryPath() says', () => {
    expect(workerEntryPath()).toBe(fileURLToPath(new URL('../dist/worker-entry.js', import.meta.url)));
    expect(existsSync(workerEntryPath())).toBe(true);
  });

  it('exits 0 with { ok: true, result } and prefixes log lines', async () => {
    const run = await entryWith('writeFiles');
    expect(run.code).toBe(0);
    expect(run.result?.ok).toBe(true);
    const result = (run.result as { result: { files: string[]; sizes: Map<string, number>; when: Date } }).result;
    expect(result.files).toEqual(['out.txt']);
    expect(result.sizes).toEqual(new Map([['out.txt', 1]]));
    expect(result.when).toEqual(new Date(0));
    expect(run.stdout).toBe('[w-writeFiles] INFO wrote out.txt\n');
    expect(run.stderr).toBe('[w-writeFiles] WARN a warning\n[w-writeFiles] WARN over two lines\n');
  });

  it('exits 0 even when the step leaves a timer running', async () => {
    const run = await entryWith('leaveTimer');
    expect(run.code).toBe(0);
    expect(run.result).toEqual({ ok: true, result: undefined });
  });

  it('exits 1 with the error’s name, message, stack and code', async () => {
    const run = await entryWith('fail');
    expect(run.code).toBe(1);
    expect(run.result?.ok).toBe(false);
    const error = (run.result as Extract<WorkerResult, { ok: false }>).error;
    expect(error).toMatchObject({ name: 'Error', message: 'fixture failure: the input was bad', code: 'E_FIXTURE' });
    expect(error.stack).toContain('steps.mjs');
  });

  it('exits 1 with CAIRN_FN_REF for a missing export', async () => {
    const run = await entryWith('noSuchExport');
    expect(run.code).toBe(1);
    const error = (run.result as Extract<WorkerResult, { ok: false }>).error;
    expect(error).toMatchObject({ name: 'CairnError', code: 'CAIRN_FN_REF' });
    expect(error.message).toContain(FIXTURE);
  });

  it('exits 1 with CAIRN_CANONICAL_VALUE when the returned value cannot be encoded', async () => {
    const run = await entryWith('returnSymbol');
    expect(run.code).toBe(1);
    expect((run.result as Extract<WorkerResult, { ok: false }>).error.code).toBe('CAIRN_CANONICAL_VALUE');
  });

  it('exits 2 without a result on bad usage', async () => {
    const resultPath = join(dir, 'usage.result.msgpack');
    const missingArg = await runEntry(['--task', join(dir, 'x.msgpack')], resultPath);
    expect(missingArg.code).toBe(2);
    expect(missingArg.stderr).toContain('--task and --result are required');
    const unknownArg = await runEntry(['--bogus', 'x'], resultPath);
    expect(unknownArg.code).toBe(2);
    const missingFile = await runEntry(['--task', join(dir, 'nope.msgpack'), '--result', resultPath], resultPath);
    expect(missingFile.code).toBe(2);
    expect(missingFile.stderr).toContain('nope.msgpack');
    expect(missingFile.result).toBeUndefined();
  });

  it('exits 2 without a result on a corrupt task payload', async () => {
    const taskPath = join(dir, 'corrupt.task.msgpack');
    const resultPath = join(dir, 'corrupt.result.msgpack');
    await writeFile(taskPath, Buffer.from([0xc1, 0x00, 0xff]));
    const run = await runEntry(['--task', taskPath, '--result', resultPath], resultPath);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('Cannot decode a task payload');
    expect(run.result).toBeUndefined();
  });

  it.each(['SIGTERM', 'SIGINT'] as const)('on %s aborts the step, writes CAIRN_CANCELLED and exits 143', async (signal) => {
    let sent = false;
    const task = pathTask('waitForAbort');
    const taskPath = join(dir, `abort-${signal}.task.msgpack`);
    const resultPath = join(dir, `abort-${signal}.result.msgpack`);
    await writeFile(taskPath, encodeTask(task));
    const run = await runEntry(['--task', taskPath, '--result', resultPath], resultPath, (text, pid) => {
      if (!sent && text.includes('waiting for abort')) {
        sent = true;
        process.kill(pid, signal);
      }
    });
    expect(run.code).toBe(143);
    expect((run.result as Extract<WorkerResult, { ok: false }>).error).toMatchObject({ name: 'CairnError', code: 'CAIRN_CANCELLED' });
    // The step saw its signal abort before the worker exited.
    expect(await readFile(join(task.outputPath, 'aborted.txt'), 'utf8')).toBe('CAIRN_CANCELLED');
  });
});

describe('worker results', () => {
  it('keep retryable across the trip, for CairnErrors and plain errors', () => {
    const cairn = new CairnError('CAIRN_TIMEOUT', 'too slow', { retryable: true });
    const plain = Object.assign(new Error('flaky network'), { code: 'ECONNRESET', retryable: true });
    const [a, b] = [cairn, plain].map((err) => {
      const r = decodeResult(encodeResult(failure(err)).bytes);
      if (r.ok) throw new Error('expected a failure');
      return rebuildError(r.error, 'step');
    });
    expect(a).toBeInstanceOf(CairnError);
    expect(a).toMatchObject({ code: 'CAIRN_TIMEOUT', retryable: true, step: 'step' });
    expect(b).toMatchObject({ name: 'Error', message: 'flaky network', code: 'ECONNRESET', retryable: true });
    const fixed = decodeResult(encodeResult(failure(new CairnError('CAIRN_CONFIG', 'bad'))).bytes);
    expect(!fixed.ok && rebuildError(fixed.error)).toMatchObject({ retryable: false });
  });
});
