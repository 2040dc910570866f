/**
 * Checkpoint directories on the S3 store (checkpoint-sync.ts), against a real RADOS Gateway: a
 * runner SIGKILLed after checkpoint 3 of 5 resumes at 3 on rerun; a runner SIGSTOPped, taken over
 * and resumed cannot corrupt the new attempt's checkpoints; and the fence itself, step by step,
 * with two stores in this process. Runner processes: fixtures/ckpt-runner.mjs (the BUILT
 * packages) running the runner's real python3 training program.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { apply, lower, OUT, type StepContext } from '@cairn/core';
import { StepRunner, type LeaseHolder } from '@cairn/runner';
import { afterEach, describe, expect, it } from 'vitest';
import { S3Store } from '../src/index.js';
import { checkpointPrefix, parseHead, type CheckpointHead } from '../src/checkpoint-layout.js';
import { clientOptions, freshPrefix, haveRgw, useGateway } from './helpers.js';
import { spawnReporting } from '../../../tools/testenv/reporting-child.js';
import { pidOf, progress } from '../../../tools/testenv/train-progress.js';

const RUNNER = fileURLToPath(new URL('./fixtures/ckpt-runner.mjs', import.meta.url));
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

const killQuietly = (pid: number, signal: NodeJS.Signals) => {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
};

async function until(check: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(50);
  }
}

function workDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'cairn-s3-ckpt-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const epochOf = (name: string) => Number(name.slice('epoch-'.length));

describe.skipIf(!haveRgw)('checkpoint directories on S3, against a real RADOS Gateway', () => {
  const gw = useGateway();

  function runner(config: Record<string, unknown>) {
    const { proc, done, output } = spawnReporting(process.execPath, [RUNNER, JSON.stringify({ store: { checkpointSyncMs: 150 }, ...config })], { ...process.env, ...gw.get().env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' });
    children.push(proc);
    const path = async () => {
      await until(() => /^PATH /m.test(output()), 30_000, 'the runner to start');
      return (/^PATH (\S+)/m.exec(output()) as RegExpExecArray)[1] as string;
    };
    return { proc, done, path, output };
  }

  /** The checkpoint head of the step at `url`; null when none. */
  async function headOf(store: S3Store, url: string): Promise<{ head: CheckpointHead; bucket: string; prefix: string } | null> {
    const { bucket, key } = store.s3.locate(url);
    const prefix = checkpointPrefix(key);
    const got = await store.s3.objects.get(bucket, `${prefix}head.json`);
    return got === null ? null : { head: parseHead(got.body.toString()) as CheckpointHead, bucket, prefix };
  }

  /** The epochs the head names. */
  async function pushedEpochs(store: S3Store, url: string): Promise<number[]> {
    const h = await headOf(store, url);
    return (h?.head.files ?? []).map((f) => epochOf(f.path)).sort((a, b) => a - b);
  }

  /** Every checkpoint object the head names, parsed. */
  async function namedCheckpoints(store: S3Store, url: string): Promise<{ epoch: number; by: string }[]> {
    const h = await headOf(store, url);
    const out: { epoch: number; by: string }[] = [];
    for (const f of h?.head.files ?? []) out.push(JSON.parse((await store.s3.objects.get(h!.bucket, h!.prefix + f.key))!.body.toString()) as { epoch: number; by: string });
    return out.sort((a, b) => a.epoch - b.epoch);
  }

  async function checkpointKeys(store: S3Store, url: string): Promise<string[]> {
    const { bucket, key } = store.s3.locate(url);
    const page = await store.s3.objects.list(bucket, { prefix: checkpointPrefix(key) });
    return page.objects.map((o) => o.key);
  }

  it('a runner SIGKILLed after checkpoint 3 of 5: the rerun pulls them and resumes at 3; the output holds one attempt\'s files; success removes them', { timeout: 120_000 }, async () => {
    const store = new S3Store(clientOptions(gw.get()));
    const prefix = freshPrefix(gw.get(), 'ckpt-killed');
    const work = workDir();
    const runtime = { work, epochs: 5, pause: 0.2, waitAt: 3 };
    const leases = { heartbeatMs: 300, staleMs: 2000 };
    const a = runner({ prefix, runtime, leases });
    const url = await a.path();
    // Checkpoint 3 is written and pushed (the head names it).
    await until(async () => (await pushedEpochs(store, url)).includes(3), 60_000, 'checkpoint 3 in the bucket');
    const program = pidOf(work, 1);
    a.proc.kill('SIGKILL');
    killQuietly(-program, 'SIGKILL');
    await a.done;
    expect(await pushedEpochs(store, url)).toEqual([1, 2, 3]);
    const b = runner({ prefix, runtime: { ...runtime, waitAt: undefined }, leases });
    expect(await b.done, b.output()).toMatchObject({ ok: true, counts: { succeeded: 1 } });
    expect(progress(work).map((l) => l.epoch)).toEqual([1, 2, 3, 4, 5]);
    const out = await store.s3.localInput(url);
    const model = JSON.parse(readFileSync(join(out, 'model.json'), 'utf8')) as { resumedFrom: number; by: string };
    expect(model.resumedFrom).toBe(3);
    expect((await store.browse.listFiles(url)).map((f) => f.path.slice(f.path.lastIndexOf('/') + 1)).filter((n) => n.startsWith('made-by-'))).toEqual([`made-by-${model.by}`]);
    expect(await checkpointKeys(store, url)).toEqual([]);
    store.s3.destroy();
  });

  it('a runner SIGSTOPped and taken over writes after SIGCONT, and the new attempt\'s checkpoints hold nothing of it', { timeout: 120_000 }, async () => {
    const store = new S3Store(clientOptions(gw.get()));
    const prefix = freshPrefix(gw.get(), 'ckpt-paused');
    const work = workDir();
    const leases = { heartbeatMs: 300, staleMs: 2000 };
    const a = runner({ prefix, runtime: { work, epochs: 5, pause: 0.3 }, leases, keepCheckpoints: true });
    const url = await a.path();
    await until(async () => (await pushedEpochs(store, url)).includes(2), 60_000, 'checkpoint 2 in the bucket');
    const programA = pidOf(work, 1);
    // A frozen VM: the runner and its program stop together.
    killQuietly(-programA, 'SIGSTOP');
    a.proc.kill('SIGSTOP');
    cleanups.push(() => killQuietly(-programA, 'SIGKILL'));
    await sleep(500);
    const pushedByA = Math.max(...(await pushedEpochs(store, url)));
    await sleep(leases.staleMs + 1000);
    const b = runner({ prefix, runtime: { work, epochs: 5, pause: 1.5 }, leases, keepCheckpoints: true });
    await until(() => progress(work).some((l) => !l.by.endsWith(`-${programA}`)), 60_000, 'runner B to take over and write');
    // A's program and runner wake up: the program writes its next checkpoints (the zombie
    // writes) and the runner's sync may try to push them before it learns the lease is gone.
    killQuietly(-programA, 'SIGCONT');
    a.proc.kill('SIGCONT');
    await until(() => progress(work).some((l) => l.by.endsWith(`-${programA}`) && l.epoch > pushedByA), 30_000, 'the zombie to write');
    expect(await a.done, a.output()).toMatchObject({ ok: false, cause: 'CAIRN_LEASE_LOST' });
    expect(await b.done, b.output()).toMatchObject({ ok: true, counts: { succeeded: 1 } });
    const model = JSON.parse(readFileSync(join(await store.s3.localInput(url), 'model.json'), 'utf8')) as { resumedFrom: number; by: string };
    expect(model.resumedFrom).toBe(pushedByA);
    expect(model.by.endsWith(`-${programA}`)).toBe(false);
    // The kept generation: A's checkpoints from before the takeover, B's after, nothing A wrote later.
    const kept = await namedCheckpoints(store, url);
    expect(kept.map((c) => c.epoch)).toEqual([1, 2, 3, 4, 5]);
    for (const c of kept) expect(c.by.endsWith(`-${programA}`) ? c.epoch <= pushedByA : c.by === model.by).toBe(true);
    // What `cairn status` shows of them, and `cairn clean` removes.
    const summary = await store.browse.checkpoints(url);
    expect(summary).toMatchObject({ generation: 2, files: 5 });
    expect(summary?.root.endsWith('/train/.v1-' + url.slice(url.lastIndexOf('-') + 1) + '.cairn-checkpoints')).toBe(true);
    await store.browse.remove(summary!.root);
    expect(await checkpointKeys(store, url)).toEqual([]);
    expect(await store.browse.checkpoints(url)).toBeNull();
    store.s3.destroy();
  });

  it('the fence: a store whose lease was taken over pushes nothing the taker\'s head names; the taker pulled only complete files', { timeout: 60_000 }, async () => {
    const prefix = freshPrefix(gw.get(), 'ckpt-fence');
    const warnings: string[] = [];
    const a = new S3Store({ ...clientOptions(gw.get()), checkpointSyncMs: 3_600_000, logger: { warn: (m) => warnings.push(m) } });
    const b = new S3Store({ ...clientOptions(gw.get()), checkpointSyncMs: 3_600_000 });
    const path = `${prefix}/train-0123`;
    const holder = (runId: string): LeaseHolder => ({ worker_id: runId, timestamp: Date.now() / 1000, host: 'h', pid: 1, processStartTime: null, runId, token: `t-${runId}` });
    const ha = holder('runa');
    const hb = holder('runb');
    expect(await a.createLease(path, ha)).toBe(true);
    const sa = await a.stage(path, ha, 1);
    expect(sa.checkpoints).toBeDefined();
    writeFileSync(join(sa.checkpoints!, 'epoch-1'), 'a1');
    writeFileSync(join(sa.checkpoints!, '.epoch-2.tmp'), 'half'); // not complete: never pushed
    await a.commit(path, ha, { status: 'FAILED', staged: sa, release: true });
    // (the FAILED commit pushed a last time; a new attempt of run A, as after a restart)
    expect(await a.createLease(path, ha)).toBe(true);
    const sa2 = await a.stage(path, ha, 1);
    expect(readdirSync(sa2.checkpoints!)).toEqual(['epoch-1']);
    // B takes the lease over while A is paused, and pulls.
    const observed = await b.readLease(path);
    expect(await b.breakLease(path, observed!)).toBe(true);
    expect(await b.createLease(path, hb)).toBe(true);
    const sb = await b.stage(path, hb, 1);
    expect(readFileSync(join(sb.checkpoints!, 'epoch-1'), 'utf8')).toBe('a1');
    // A wakes up and pushes its next checkpoint: refused.
    writeFileSync(join(sa2.checkpoints!, 'epoch-2'), 'zombie');
    await a.stage(path, ha, 2, sa2);
    expect(warnings.join('\n')).toMatch(/no longer this runner's/);
    // B pushes its own: the head names A's epoch-1 and B's epoch-2.
    writeFileSync(join(sb.checkpoints!, 'epoch-2'), 'b2');
    await b.commit(path, hb, { status: 'FAILED', staged: sb, release: true });
    const c = new S3Store(clientOptions(gw.get()));
    const hc = holder('runc');
    expect(await c.createLease(path, hc)).toBe(true);
    const sc = await c.stage(path, hc, 1);
    expect(readdirSync(sc.checkpoints!).sort()).toEqual(['epoch-1', 'epoch-2']);
    expect(readFileSync(join(sc.checkpoints!, 'epoch-2'), 'utf8')).toBe('b2');
    await c.commit(path, hc, { status: 'FAILED', staged: sc, release: true });
    for (const s of [a, b, c]) s.s3.destroy();
  });

  it('ctx.checkpointDir of an inline function step: a retry sees what the failed attempt left; the success removes them from the bucket', { timeout: 60_000 }, async () => {
    const store = new S3Store({ ...clientOptions(gw.get()), checkpointSyncMs: 100 });
    const prefix = freshPrefix(gw.get(), 'ckpt-fn');
    const seen: string[][] = [];
    const step = apply({
      name: 'fit',
      version: 'v1',
      retries: 1,
      inputs: { out: OUT },
      fn: (_: { out: string }, ctx?: StepContext) => {
        const dir = ctx?.checkpointDir as string;
        seen.push(readdirSync(dir).sort());
        writeFileSync(join(dir, `ckpt-${ctx?.attempt}`), 'x');
        if (ctx?.attempt === 1) throw new Error('crash after a checkpoint');
        return 'ok';
      },
    });
    const url = lower(step).outputPath(prefix);
    await new StepRunner({ prefix, store, logger: quiet }).run([step]);
    expect(seen).toEqual([[], ['ckpt-1']]);
    expect(await checkpointKeys(store, url)).toEqual([]);
    store.s3.destroy();
  });
});
