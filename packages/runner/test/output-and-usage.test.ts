/**
 * Step output captured into the attempt's log (inline with `captureOutput`, threads always),
 * what each executor measures of an attempt (`usage.json`), and `run(…handles, options)`.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apply, defineStep, OUT } from '@cairn/core';
import { createInlineExecutor, readUsage, run, StepRunner } from '../src/index.js';
import { chatty } from './fixtures/chatty-steps.mjs';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cairn-output-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function logsOf(runner: StepRunner, path: string): Promise<{ out: string; err: string }> {
  const f = (await runner.store.attemptLogs(path)).find((a) => a.attempt === 1) ?? { stdout: '', stderr: '' };
  const read = (p: string) => readFile(p, 'utf8').catch(() => '');
  return { out: await read(f.stdout), err: await read(f.stderr) };
}

describe('step output', () => {
  it('inline with captureOutput: each of two interleaved steps gets its own console lines', async () => {
    const prefix = join(dir, 'inline');
    const runner = new StepRunner({ prefix, executors: { inline: createInlineExecutor({ captureOutput: true }) } });
    // process.stdout.write, not console.log: vitest gives tests a console of its own.
    const say = (who: string) => async () => {
      process.stdout.write(`first ${who}\n`);
      await new Promise((r) => setTimeout(r, who === 'a' ? 30 : 5));
      process.stdout.write(`second ${who}\n`);
      process.stderr.write(`err ${who}\n`);
    };
    const a = apply({ name: 'say-a', fn: say('a'), version: 'v1', inputs: { out: OUT } });
    const b = apply({ name: 'say-b', fn: say('b'), version: 'v1', inputs: { out: OUT } });
    await runner.run([a.lower(), b.lower()]);
    for (const [who, h] of [['a', a], ['b', b]] as const) {
      const logs = await logsOf(runner, h.lower().outputPath(prefix));
      expect(logs.out).toBe(`first ${who}\nsecond ${who}\n`);
      expect(logs.err).toBe(`err ${who}\n`);
    }
  });

  it('inline without captureOutput leaves the terminal alone (the library default)', async () => {
    const prefix = join(dir, 'plain');
    const runner = new StepRunner({ prefix });
    const quiet = apply({ name: 'quiet', fn: () => void process.stdout.write('to the terminal\n'), version: 'v1', inputs: { out: OUT } });
    await runner.run([quiet.lower()]);
    expect(await logsOf(runner, quiet.lower().outputPath(prefix))).toEqual({ out: '', err: '' });
  });

  it('threads: console output goes to the attempt log; usage has the thread CPU time and heap', async () => {
    const prefix = join(dir, 'threads');
    const runner = new StepRunner({ prefix, defaultExecutor: 'threads' });
    const spec = apply({ name: 'spin', fn: chatty, version: 'v1', inputs: { who: 'thread', spinMs: 150, out: OUT } }).lower();
    await runner.run([spec]);
    const path = spec.outputPath(prefix);
    expect(await logsOf(runner, path)).toEqual({ out: 'out thread\n', err: 'err thread\n' });
    const usage = await readUsage(join(path, '.cairn', 'attempt-1'));
    expect(usage).toMatchObject({ executor: 'threads', cpuScope: 'thread', memoryKind: 'heap' });
    // It spun for 150 ms of wall time; on a loaded machine it gets less CPU than that, never more than the attempt took.
    const attempt = (await runner.store.readStates([path], true))[0]!.record!.attempts[0]!;
    expect(usage!.cpuMs!).toBeGreaterThan(20);
    expect(usage!.cpuMs!).toBeLessThanOrEqual(attempt.end - attempt.start + 15);
    expect(usage!.peakMemoryBytes!).toBeGreaterThan(1 << 20);
  });

  it('process: usage has the worker process tree CPU time, peak RSS and exit code', async () => {
    const prefix = join(dir, 'process');
    const runner = new StepRunner({ prefix, defaultExecutor: 'process' });
    const spec = apply({ name: 'spin', fn: chatty, version: 'v1', inputs: { who: 'process', spinMs: 150, out: OUT } }).lower();
    await runner.run([spec]);
    const path = spec.outputPath(prefix);
    expect(await logsOf(runner, path)).toEqual({ out: 'out process\n', err: 'err process\n' });
    const usage = await readUsage(join(path, '.cairn', 'attempt-1'));
    expect(usage).toMatchObject({ executor: 'process', cpuScope: 'tree', memoryKind: 'rss', memoryScope: 'tree', exitCode: 0, signal: null });
    expect(usage!.cpuMs!).toBeGreaterThan(20);
    expect(usage!.peakMemoryBytes!).toBeGreaterThan(10 << 20);
  });
});

describe('run(…handles, options)', () => {
  const count = defineStep(import.meta.url, 'count', async ({ n }: { n: number }) => ({ n: n + 1 }));

  it('takes the runner and run options after the handles', async () => {
    const prefix = join(dir, 'run-fn');
    const one = apply({ name: 'one', fn: count, version: 'v1', inputs: { n: 1 } });
    const two = apply({ name: 'two', fn: count, version: 'v1', inputs: { n: 2 } });
    const [a, b] = await run(one, two, { prefix, maxConcurrent: 1, forceRunFailed: false });
    expect(a).toEqual({ path: one.lower().outputPath(prefix), value: { n: 2 } });
    expect(b?.value).toEqual({ n: 3 });
    const [again] = await run(one);
    expect(again?.path).not.toContain(prefix); // no options: CAIRN_PREFIX or ./.cairn
  });

  it('rejects options without handles, and options the runner refuses', async () => {
    await expect((run as (...a: unknown[]) => Promise<unknown>)({ prefix: dir })).rejects.toMatchObject({ code: 'CAIRN_BAD_DEPENDENCY' });
    const one = apply({ name: 'one', fn: count, version: 'v1', inputs: { n: 1 } });
    expect(() => run(one, { prefix: dir, maxConcurrent: 0 })).toThrow(/maxConcurrent must be a positive integer/);
  });
});
