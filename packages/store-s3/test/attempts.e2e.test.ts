/**
 * An S3 output is exactly one attempt's objects, against a real RADOS Gateway: a `dev` step
 * rebuilt with fewer files, a runner SIGKILLed mid-upload and rerun, and a runner SIGSTOPped
 * mid-upload, taken over, then resumed. Readers (`localInput`, the CLI's listing) and the raw
 * bucket listing show the last committed attempt's files only; the paused runner ends with
 * CAIRN_LEASE_LOST. Runner processes: fixtures/gen-runner.mjs (the BUILT packages).
 */
import type { ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { apply, lower, OUT } from '@cairn/core';
import { StepRunner } from '@cairn/runner';
import { writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { S3Store } from '../src/index.js';
import { clientOptions, freshPrefix, haveRgw, useGateway } from './helpers.js';
import { spawnReporting } from '../../../tools/testenv/reporting-child.js';

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
const RUNNER = fileURLToPath(new URL('./fixtures/gen-runner.mjs', import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const METADATA = /(^|\/)(\.executor_status(\.lock)?|\.artifact\.json)$|(^|\/)\.cairn\//;

interface Outcome {
  readonly ok: boolean;
  readonly code?: string;
  readonly cause?: string;
  readonly message?: string;
  readonly counts?: Record<string, number>;
}

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

describe.skipIf(!haveRgw)('S3 commits publish exactly one attempt, against a real RADOS Gateway', () => {
  const gw = useGateway();

  /** A gen-runner child on the gateway. */
  function runner(config: Record<string, unknown>) {
    const c = spawnReporting<Outcome>(process.execPath, [RUNNER, JSON.stringify(config)], { ...process.env, ...gw.get().env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' });
    children.push(c.proc);
    return c;
  }

  /** Every key under the step directory of `url` that is not metadata, relative to it. */
  async function rawOutputs(store: S3Store, url: string): Promise<string[]> {
    const { bucket, key } = store.s3.locate(url);
    const out: string[] = [];
    let token: string | undefined;
    do {
      const page = await store.s3.objects.list(bucket, { prefix: `${key}/`, continuationToken: token });
      for (const o of page.objects) if (!METADATA.test(o.key.slice(key.length + 1))) out.push(o.key.slice(key.length + 1));
      token = page.truncated ? page.next : undefined;
    } while (token !== undefined);
    return out.sort();
  }

  /** What the readers show of the output at `url`: the files `localInput` downloads, and the CLI's listing (names of output files). */
  async function readers(store: S3Store, url: string): Promise<{ local: string[]; listed: string[] }> {
    const local = readdirSync(await store.s3.localInput(url)).sort();
    const files = await store.browse.listFiles(url);
    const listed = files.map((f) => f.path.slice(url.length + 1)).filter((rel) => !METADATA.test(rel)).map((rel) => rel.slice(rel.lastIndexOf('/') + 1)).sort();
    return { local, listed };
  }

  /** Waits until `check` holds (polling), or throws naming `what`. */
  async function until(check: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
    const end = Date.now() + ms;
    while (!(await check())) {
      if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
      await sleep(20);
    }
  }

  it('a dev step rebuilt with 2 files instead of 5: the output shows exactly the 2', async () => {
    const store = new S3Store(clientOptions(gw.get()));
    const prefix = freshPrefix(gw.get(), 'rebuilt');
    let files = 5;
    const gen = apply({
      name: 'gen',
      version: 'dev',
      inputs: { out: OUT },
      fn: ({ out }: { out: string }) => {
        for (let i = 0; i < files; i++) writeFileSync(join(out, `f${i}`), `build with ${files}`);
        return files;
      },
    });
    const url = lower(gen).outputPath(prefix);
    const runner = new StepRunner({ prefix, store, logger: quiet });
    await runner.run([gen]);
    expect((await readers(store, url)).local).toEqual(['f0', 'f1', 'f2', 'f3', 'f4']);
    files = 2;
    await runner.run([gen]);
    expect(await readers(store, url)).toEqual({ local: ['f0', 'f1'], listed: ['f0', 'f1'] });
    // Nothing of the first build is left in the bucket either.
    expect((await rawOutputs(store, url)).map((k) => k.slice(k.lastIndexOf('/') + 1))).toEqual(['f0', 'f1']);
    store.s3.destroy();
  });

  it.each([
    ['over an earlier build', true],
    ['of a step never built', false],
  ])('a runner SIGKILLed mid-upload %s, then a rerun: exactly the rerun\'s objects', { timeout: 120_000 }, async (_what, earlier) => {
    const store = new S3Store(clientOptions(gw.get()));
    const prefix = freshPrefix(gw.get(), 'killed');
    const leases = { heartbeatMs: 300, staleMs: 1500 };
    if (earlier) expect(await runner({ prefix, tag: 'old', files: 5, leases }).done).toMatchObject({ ok: true });
    const a = runner({ prefix, tag: 'killed', files: 60, bytes: 256 * 1024, leases });
    await until(() => a.output().includes('PATH '), 30_000, 'the runner to start');
    const url = (/PATH (\S+)/.exec(a.output()) as RegExpExecArray)[1] as string;
    await until(async () => (await rawOutputs(store, url)).some((k) => /(^|\/)killed-\d+$/.test(k)), 30_000, 'the upload to begin');
    a.proc.kill('SIGKILL');
    await a.done;
    expect((await rawOutputs(store, url)).filter((k) => /killed-/.test(k)).length).toBeLessThan(60); // killed mid-upload
    expect(await runner({ prefix, tag: 'rerun', files: 2, leases }).done).toMatchObject({ ok: true, counts: { succeeded: 1 } });
    expect(await readers(store, url)).toEqual({ local: ['rerun-0', 'rerun-1'], listed: ['rerun-0', 'rerun-1'] });
    expect((await rawOutputs(store, url)).map((k) => k.slice(k.lastIndexOf('/') + 1))).toEqual(['rerun-0', 'rerun-1']);
    store.s3.destroy();
  });

  it('a runner SIGSTOPped mid-upload, taken over, then resumed: the committed output is untouched and the paused one ends with CAIRN_LEASE_LOST', { timeout: 120_000 }, async () => {
    const store = new S3Store(clientOptions(gw.get()));
    const prefix = freshPrefix(gw.get(), 'paused');
    const leases = { heartbeatMs: 300, staleMs: 1500 };
    const a = runner({ prefix, tag: 'paused', files: 60, bytes: 256 * 1024, leases });
    await until(() => a.output().includes('PATH '), 30_000, 'the runner to start');
    const url = (/PATH (\S+)/.exec(a.output()) as RegExpExecArray)[1] as string;
    await until(async () => (await rawOutputs(store, url)).some((k) => /(^|\/)paused-\d+$/.test(k)), 30_000, 'the upload to begin');
    a.proc.kill('SIGSTOP'); // a frozen VM, a long GC pause
    const b = runner({ prefix, tag: 'taker', files: 2, leases });
    expect(await b.done, b.output()).toMatchObject({ ok: true, counts: { succeeded: 1 } });
    const committed = await readers(store, url);
    expect(committed).toEqual({ local: ['taker-0', 'taker-1'], listed: ['taker-0', 'taker-1'] });
    a.proc.kill('SIGCONT');
    const ra = await a.done;
    expect(ra, a.output()).toMatchObject({ ok: false, code: 'CAIRN_STEP_FAILED', cause: 'CAIRN_LEASE_LOST' });
    expect(a.output()).not.toMatch(/ENOENT/);
    // The taker's output, record and status stand; the paused runner's uploads are gone.
    const fresh = new S3Store(clientOptions(gw.get()));
    expect(await readers(fresh, url)).toEqual(committed);
    const { bucket, key } = fresh.s3.locate(url);
    expect(JSON.parse((await fresh.s3.objects.get(bucket, `${key}/.artifact.json`))?.body.toString() ?? '{}').result).toBe('taker');
    expect((await fresh.s3.objects.get(bucket, `${key}/.executor_status`))?.body.toString()).toBe('SUCCESS');
    expect((await rawOutputs(fresh, url)).map((k) => k.slice(k.lastIndexOf('/') + 1))).toEqual(['taker-0', 'taker-1']);
    store.s3.destroy();
    fresh.s3.destroy();
  });
});
