import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { StepSpec } from '@cairn/core';
import { StepRunner } from '@cairn/runner';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSshExecutor } from '../src/index.js';
import { FIXTURES, hostOf, scratch, removeScratch, sshdOrSkip, startSshd, type SshdInstance } from './helpers.js';

const run = sshdOrSkip();

describe.runIf(run)('StepRunner with the SSH executor (end to end)', () => {
  let a: SshdInstance;
  let b: SshdInstance;
  beforeAll(async () => {
    [a, b] = await Promise.all([startSshd(), startSshd()]);
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    removeScratch();
  });

  it('runs inline → ssh → inline, then reruns fully cached', async () => {
    const prefix = scratch();
    const source = new StepSpec({ name: 'source', executor: 'inline', fn: (out) => writeFileSync(join(out, 'data.txt'), 'from the runner') });
    const gather = new StepSpec({ name: 'gather', executor: 'ssh', deps: [source], ref: { module: FIXTURES, export: 'gather' } });
    const hello = new StepSpec({ name: 'hello', executor: 'ssh', ref: { module: FIXTURES, export: 'hello' }, resources: { cpu: 1 } });
    const report = new StepSpec({
      name: 'report',
      executor: 'inline',
      deps: [gather, hello],
      fn: (out, ctx) => {
        const gathered = JSON.parse(readFileSync(join(ctx.depPaths[gather.nameWithHash] as string, 'gathered.json'), 'utf8')) as Record<string, string>;
        const greeting = readFileSync(join(ctx.depPaths[hello.nameWithHash] as string, 'hello.txt'), 'utf8');
        writeFileSync(join(out, 'report.txt'), `${gathered[`${source.nameWithHash}/data.txt`]}|${greeting}`);
      },
    });
    const mk = () => createSshExecutor({ hosts: [hostOf(a, 'a'), hostOf(b, 'b')], pollIntervalMs: 50 });
    const runner = new StepRunner({ prefix, executors: [mk()] });
    const first = await runner.run([report], { handleSigint: false });
    expect(first.outcome(report)?.state).toBe('succeeded');
    expect(readFileSync(join(prefix, report.nameWithHash, 'report.txt'), 'utf8')).toBe('from the runner|hello from ssh\n');
    const again = await new StepRunner({ prefix, executors: [mk()] }).run([report], { handleSigint: false });
    // Nothing runs again: the root is a cache hit, so its dependencies are not even visited.
    expect(again.outcome(report)?.state).toBe('cached');
    expect(Object.keys(again.counts)).toEqual(['cached']);
  });
});
