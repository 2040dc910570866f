import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { StepSpec } from '@cairn/core';
import { localLayout, StepRunner, type ArtifactRecord } from '@cairn/runner';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRunnerUntilJob } from '../../../tools/testenv/runner-child.js';
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

  it.each([
    ['staged on the host and copied back', false],
    ['in place on a shared filesystem', true],
  ])('a function step\'s failed attempt resumes from ctx.checkpointDir: %s', async (_label, sharedFs) => {
    const prefix = scratch();
    const step = new StepSpec({ name: `resumer-${String(sharedFs)}`, executor: 'ssh', ref: { module: FIXTURES, export: 'resumer' }, retries: 1 });
    const executor = createSshExecutor({ hosts: [hostOf(a, 'a')], pollIntervalMs: 50, sharedFs });
    // The login user is not the runner's (root): the "shared" store must be writable by both.
    const umask = sharedFs ? process.umask(0) : undefined;
    try {
      const [loaded] = await new StepRunner({ prefix, executors: [executor], logger: { info() {}, warn() {}, error() {} } }).load([step], { handleSigint: false });
      const { dir, ...rest } = loaded.value as { start: number; attempt: number; dir: string };
      expect(rest).toEqual({ start: 3, attempt: 2 });
      // Shared: the store's own directory; staged: the host's copy in the job dir.
      expect(dir.startsWith(prefix)).toBe(sharedFs);
    } finally {
      if (umask !== undefined) process.umask(umask);
    }
  }, 60_000);

  it('ctx.resolved loads a typed dependency on the SSH host, with the kind of the re-imported module', async () => {
    const prefix = scratch();
    const { summary } = await import('./fixtures/artifact-steps.mjs');
    const executor = createSshExecutor({ hosts: [hostOf(a, 'a')], pollIntervalMs: 50 });
    const [loaded] = await new StepRunner({ prefix, executors: [executor], logger: { info() {}, warn() {}, error() {} } }).load([summary], { handleSigint: false });
    expect(loaded.value).toMatchObject({ perLine: 3.5, samePath: true });
    // It ran in the SSH worker, not in this process.
    expect(loaded.value.pid).not.toBe(process.pid);
  }, 60_000);

  it('a runner restarted while its SSH job runs adopts the job instead of submitting it again', async () => {
    const prefix = scratch();
    const hosts = [hostOf(a, 'a')];
    // The same step as in fixtures/runner-child.mjs.
    const nap = () => new StepSpec({ name: 'nap', executor: 'ssh', ref: { module: FIXTURES, export: 'sleeper' }, hashAttrs: { case: 'adopt' }, resources: { cpu: 1, hints: { sleepMs: 3000 } } });
    const path = nap().outputPath(prefix);
    const { child, exited, job } = await startRunnerUntilJob(fileURLToPath(new URL('./fixtures/runner-child.mjs', import.meta.url)), [prefix, JSON.stringify(hosts)], path);
    child.kill('SIGKILL');
    await exited;

    const second = createSshExecutor({ hosts, pollIntervalMs: 50 });
    const submit = second.submit.bind(second);
    let submits = 0;
    second.submit = (req) => {
      submits++;
      return submit(req);
    };
    const summary = await new StepRunner({ prefix, executors: [second], logger: { info() {}, warn() {}, error() {} } }).run([nap()], { handleSigint: false });
    expect(summary.counts).toEqual({ succeeded: 1 });
    expect(submits).toBe(0);
    const record = JSON.parse(readFileSync(join(path, '.artifact.json'), 'utf8')) as ArtifactRecord;
    expect(record.result).toBe('slept');
    expect(record.attempts).toMatchObject([{ attempt: 1, state: 'succeeded', executor: 'ssh', adopted: true, jobId: job.job.jobId }]);
    expect(existsSync(localLayout.jobFile(path))).toBe(false);
  }, 60_000);
});
