/**
 * Lease liveness judged by the lease object's age on the gateway, not by the holders' clocks,
 * against a real RADOS Gateway: a runner whose clock runs 2 minutes ahead (a child with
 * tools/testenv/clock-offset.mjs preloaded) leaves a live lease alone, and a dead holder whose
 * timestamp lies an hour in the future is taken over once its lease object is `staleMs` old,
 * with a warning naming the lease.
 */
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { apply, lower } from '@cairn/core';
import { StepRunner } from '@cairn/runner';
import { afterEach, describe, expect, it } from 'vitest';
import { S3Store } from '../src/index.js';
import { clientOptions, freshPrefix, haveRgw, useGateway } from './helpers.js';
import { spawnReporting } from '../../../tools/testenv/reporting-child.js';

const RUNNER = fileURLToPath(new URL('./fixtures/gen-runner.mjs', import.meta.url));
const CLOCK = fileURLToPath(new URL('../../../tools/testenv/clock-offset.mjs', import.meta.url)); // shared with the runner's lease test
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

describe.skipIf(!haveRgw)('S3 leases under skewed clocks, against a real RADOS Gateway', () => {
  const gw = useGateway();

  /** A gen-runner child whose clock is `offsetMs` ahead. */
  function runner(config: Record<string, unknown>, offsetMs = 0) {
    const c = spawnReporting<{ ok: boolean; counts?: Record<string, number> }>(process.execPath, ['--import', CLOCK, RUNNER, JSON.stringify(config)], {
      ...process.env,
      ...gw.get().env,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      CAIRN_TEST_CLOCK_OFFSET_MS: String(offsetMs),
    });
    children.push(c.proc);
    return c;
  }

  it('a runner whose clock runs 2 minutes ahead does not take over a live lease', { timeout: 120_000 }, async () => {
    const prefix = freshPrefix(gw.get(), 'ahead');
    const leases = { heartbeatMs: 300, staleMs: 3000, pollMs: 100 };
    const a = runner({ prefix, tag: 'holder', files: 1, stepMs: 6000, leases });
    const end = Date.now() + 30_000;
    while (!a.output().includes('STARTED holder')) {
      if (Date.now() > end) throw new Error(`the holder never started: ${a.output()}`);
      await sleep(50);
    }
    const b = runner({ prefix, tag: 'ahead', files: 1, leases }, 120_000);
    const [ra, rb] = await Promise.all([a.done, b.done]);
    expect(b.output()).not.toContain('STARTED ahead'); // it waited for the live holder
    expect(ra, a.output()).toMatchObject({ ok: true, counts: { succeeded: 1 } });
    expect(rb, b.output()).toMatchObject({ ok: true });
    const store = new S3Store(clientOptions(gw.get()));
    const { bucket, key } = store.s3.locate((/PATH (\S+)/.exec(a.output()) as RegExpExecArray)[1] as string);
    expect(JSON.parse((await store.s3.objects.get(bucket, `${key}/.artifact.json`))?.body.toString() ?? '{}').result).toBe('holder');
    store.s3.destroy();
  });

  it('a dead holder whose timestamp is an hour in the future is taken over after staleMs of object age, with a warning naming the lease', { timeout: 60_000 }, async () => {
    const store = new S3Store(clientOptions(gw.get()));
    const prefix = freshPrefix(gw.get(), 'future');
    const gen = apply({ name: 'gen', version: 'dev', inputs: {}, fn: () => 'taken over' });
    const url = lower(gen).outputPath(prefix);
    const { bucket, key } = store.s3.locate(url);
    const ghost = { worker_id: 'ghost-host-4242-r', timestamp: Date.now() / 1000 + 3600, host: 'ghost-host', pid: 4242, processStartTime: null, runId: 'r', token: 'r.4242' };
    await store.s3.objects.put(bucket, `${key}/.executor_status.lock`, JSON.stringify(ghost), 'application/json');
    const warnings: string[] = [];
    const logger = { info: () => undefined, warn: (m: string) => warnings.push(m), error: () => undefined };
    const warned = new S3Store(clientOptions(gw.get(), { logger: { warn: (m) => warnings.push(m) } }));
    const runner = new StepRunner({ prefix, store: warned, logger, leases: { heartbeatMs: 300, staleMs: 1500, pollMs: 100 } });
    const started = Date.now();
    const run = runner.run([gen]);
    const timeout = sleep(20_000).then(() => 'still blocked');
    const result = await Promise.race([run, timeout]);
    expect(result).not.toBe('still blocked');
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000); // not before the lease object was stale
    expect((await runner.load([gen]))[0]?.value).toBe('taken over');
    expect(warnings.join('\n')).toMatch(new RegExp(`The lease s3://${bucket}/${key}/\\.executor_status\\.lock \\(held by ghost-host-4242-r\\) has a timestamp \\d+ s in the future`));
    store.s3.destroy();
    warned.s3.destroy();
  });
});
