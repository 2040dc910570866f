import { describe, expect, it } from 'vitest';
import { homedir } from 'node:os';
import { createInlineExecutor, createProcessExecutor, createThreadsExecutor, MemoryStore } from '../src/index.js';
import { checkRunOptions, checkStepRunnerOptions, POOL_NAMES } from '../src/options.js';
import { thrown } from './helpers/thrown.js';


const runner = (o: unknown) => thrown(() => checkStepRunnerOptions(o));

describe('checkStepRunnerOptions', () => {
  it('accepts what the README shows, and no options at all', () => {
    const ok = { prefix: '/mnt/cairn', maxConcurrent: 16, pools: { gpu: 8, memoryGb: 64, cpu: 16 }, store: new MemoryStore(), executorOptions: { threads: { maxThreads: 4 } }, defaultExecutor: 'threads', leases: { heartbeatMs: 1000, staleMs: 5000, pollMs: 100 }, logger: console, onEvent: () => {} };
    expect(checkStepRunnerOptions(ok)).toBe(ok);
    expect(checkStepRunnerOptions(undefined)).toEqual({});
    expect(checkStepRunnerOptions({ store: 'memory', prefix: 's3://bucket/x', remoteExecutor: 'inline' })).toBeDefined();
  });

  it('maxConcurrent: "4" says it got a string (issue 18: the message said "got 4")', () => {
    const err = runner({ maxConcurrent: '4' });
    expect(err.code).toBe('CAIRN_CONFIG');
    expect(err.message).toBe('new StepRunner(): maxConcurrent must be a positive integer such as 8, got "4" (a string).');
    for (const bad of [0, -1, 1.5, Number.NaN, Infinity, null, true]) expect(runner({ maxConcurrent: bad }).code).toBe('CAIRN_CONFIG');
  });

  it('unknown keys name the nearest known one', () => {
    const err = runner({ maxConcurrency: 4 });
    expect(err.code).toBe('CAIRN_UNKNOWN_OPTION');
    expect(err.message).toMatch(/^new StepRunner\(\): unknown option "maxConcurrency"; did you mean "maxConcurrent"\? Known options: maxConcurrent, prefix, executors/);
    expect(runner({ prefx: '/x' }).message).toMatch(/"prefx"; did you mean "prefix"/);
    expect(runner({ retries: 3 }).message).toMatch(/unknown option "retries"; remove it/);
  });

  it('prefix: empty refused, ~ expanded by resolvePrefix', () => {
    const err = runner({ prefix: '' });
    expect(err.code).toBe('CAIRN_INVALID_PATH');
    expect(err.message).toMatch(/^new StepRunner\(\): prefix "" is empty/);
    expect(runner({ prefix: 42 }).code).toBe('CAIRN_INVALID_PATH');
    expect(() => checkStepRunnerOptions({ prefix: '~/cairn' })).not.toThrow();
    expect(homedir()).not.toBe('');
  });

  it('pools: only gpu, memoryGb and cpu are drawn on; a typo would be ignored', () => {
    expect(POOL_NAMES).toEqual(['gpu', 'memoryGb', 'cpu']);
    const err = runner({ pools: { gpus: 2 } });
    expect(err.code).toBe('CAIRN_UNKNOWN_OPTION');
    expect(err.message).toMatch(/^new StepRunner\(\): pools: unknown option "gpus"; did you mean "gpu"\?/);
    expect(runner({ pools: { gpu: -1 } }).message).toBe('new StepRunner(): pools.gpu must be a non-negative number, got -1 (a number).');
    expect(runner({ pools: { gpu: '2' } }).message).toMatch(/got "2" \(a string\)/);
    expect(runner({ pools: [1] }).code).toBe('CAIRN_CONFIG');
  });

  it('executor names: their form, and that defaultExecutor / remoteExecutor exist', () => {
    const err = runner({ defaultExecutor: 'thread' });
    expect(err.code).toBe('CAIRN_EXECUTOR');
    expect(err.message).toMatch(/^new StepRunner\(\): defaultExecutor: no executor named "thread"; did you mean "threads"\? Registered: inline, threads, process\./);
    expect(runner({ remoteExecutor: 'has space' }).code).toBe('CAIRN_CONFIG');
    const custom = { name: 'gpu-box', create: () => createInlineExecutor() };
    expect(() => checkStepRunnerOptions({ executors: [custom], remoteExecutor: 'gpu-box', executorOptions: { 'gpu-box': {} } })).not.toThrow();
    expect(() => checkStepRunnerOptions({ executors: { mine: custom }, defaultExecutor: 'mine' })).not.toThrow();
  });

  it('executors: each entry an executor or a factory with a valid, unique name', () => {
    expect(runner({ executors: [{ name: 'x' }] }).message).toMatch(/executors\[0\] must be an executor \(with submit\) or a factory \(with create\)/);
    expect(runner({ executors: [{ name: '', create: () => null }] }).message).toMatch(/executors\[0\]\.name: "" is not an executor name/);
    expect(runner({ executors: [{ name: 'x', submit: () => null }] }).message).toMatch(/has no start, poll, cancel, stop method/);
    const f = { name: 'x', create: () => createInlineExecutor() };
    expect(runner({ executors: [f, f] }).message).toMatch(/executors\[1\] is a second executor named "x"/);
    expect(runner({ executors: 'inline' }).code).toBe('CAIRN_CONFIG');
    expect(() => checkStepRunnerOptions({ executors: [createInlineExecutor()] })).not.toThrow();
  });

  it('executorOptions: by registered name, and only for factories', () => {
    expect(runner({ executorOptions: { thread: { maxThreads: 2 } } }).message).toMatch(/executorOptions: unknown option "thread"; did you mean "threads"\?/);
    const noop = async () => undefined;
    const instance = { name: 'inst', capabilities: createInlineExecutor().capabilities, start: noop, submit: noop, poll: noop, cancel: noop, stop: noop };
    expect(runner({ executors: [instance], executorOptions: { inst: {} } }).message).toMatch(/executorOptions\.inst is never used: executor "inst" was given as an instance/);
  });

  it('store, logger, onEvent, leases', () => {
    expect(runner({ store: 'disk' }).message).toMatch(/store must be 'local', 'memory' or a Store object, got "disk" \(a string\)/);
    expect(runner({ store: { kind: 'x', readStates: () => [] } }).message).toMatch(/store is not a Store \(it lacks checkWritable, createLease/);
    expect(runner({ logger: { info() {} } }).message).toMatch(/logger must be an object with info, warn and error functions/);
    expect(runner({ onEvent: 'log' }).code).toBe('CAIRN_CONFIG');
    expect(runner({ leases: { heartbeat: 10 } }).message).toMatch(/leases: unknown option "heartbeat"; did you mean "heartbeatMs"/);
    expect(runner({ leases: { staleMs: 1000 } }).message).toMatch(/leases\.staleMs \(1000\) must be larger than heartbeatMs \(30000\)/);
    expect(runner({ leases: { pollMs: 0 } }).message).toMatch(/leases\.pollMs must be a positive number of milliseconds, got 0/);
    // Issue 28: a timer above 2^31-1 ms fires at once in Node (pollMs: 2**31 polled every 1 ms).
    for (const k of ['pollMs', 'heartbeatMs']) {
      const err = runner({ leases: { [k]: 2 ** 31, staleMs: 2 ** 32 } });
      expect(err.code, k).toBe('CAIRN_CONFIG');
      expect(err.message).toMatch(new RegExp(`leases\\.${k} must be at most 2147483647 ms`));
    }
    expect(() => checkStepRunnerOptions({ leases: { pollMs: 2 ** 31 - 1 } })).not.toThrow();
  });

  it('options that are not a plain object', () => {
    for (const bad of [4, 'x', [], new Map()]) expect(runner(bad).code).toBe('CAIRN_CONFIG');
  });
});

describe('checkRunOptions', () => {
  it('accepts the documented options', () => {
    expect(() => checkRunOptions({ dryRun: false, forceRunFailed: true, maxConcurrent: 2, signal: new AbortController().signal, handleSigint: false })).not.toThrow();
    expect(checkRunOptions(undefined)).toEqual({});
  });

  it('refuses wrong types and unknown keys with the value type shown', () => {
    const t = (o: unknown, where?: string) => thrown(() => checkRunOptions(o, where));
    expect(t({ dryRun: 'yes' }).message).toBe('run(): dryRun must be true or false, got "yes" (a string).');
    expect(t({ maxConcurrent: '4' }).message).toMatch(/got "4" \(a string\)/);
    expect(t({ signal: {} }).message).toMatch(/signal must be an AbortSignal/);
    expect(t({ forceRunFaild: false }).message).toMatch(/^run\(\): unknown option "forceRunFaild"; did you mean "forceRunFailed"\?/);
    expect(t({ dryrun: true }, 'plan()').message).toMatch(/^plan\(\): unknown option "dryrun"; did you mean "dryRun"\?/);
  });
});

describe('local executor options (issue 18: a misspelt key was ignored in silence)', () => {
  it('unknown keys name the nearest known one; bad values say what they must be', () => {
    const threads = thrown(() => createThreadsExecutor({ maxThread: 4 } as never));
    expect(threads.code).toBe('CAIRN_UNKNOWN_OPTION');
    expect(threads.message).toMatch(/the threads executor's options: unknown option "maxThread"; did you mean "maxThreads"\?/);
    expect(thrown(() => createProcessExecutor({ killGrace: 1 } as never)).message).toMatch(/"killGrace"; did you mean "killGraceMs"\?/);
    expect(thrown(() => createThreadsExecutor({ maxThreads: 0 })).message).toMatch(/^the threads executor's options: maxThreads must be an integer of at least 1, got 0/);
    expect(thrown(() => createProcessExecutor({ env: { A: 1 } } as never)).code).toBe('CAIRN_CONFIG');
    expect(thrown(() => createProcessExecutor({ nodeArgs: '--inspect' } as never)).message).toMatch(/nodeArgs must be a list of strings/);
  });

  it('the documented options are accepted (nothing starts before the runner starts the executor)', () => {
    expect(createThreadsExecutor({ maxThreads: 2, minThreads: 0, cancelGraceMs: 100, execArgv: [] }).name).toBe('threads');
    expect(createProcessExecutor({ nodeArgs: [], killGraceMs: 100, env: { A: '1' } }).name).toBe('process');
  });
});

describe('recorded errors', () => {
  it("keep the error's cause chain (issue 18: the record dropped it)", async () => {
    const { errorData } = await import('../src/store/records.js');
    const inner = Object.assign(new Error('ECONNRESET by peer'), { code: 'ECONNRESET' });
    const data = errorData(new Error('upload failed', { cause: new Error('retry budget spent', { cause: inner }) }));
    expect(data.message).toBe('upload failed');
    expect(data.cause?.message).toBe('retry budget spent');
    expect(data.cause?.cause).toMatchObject({ message: 'ECONNRESET by peer', code: 'ECONNRESET' });
  });
});
