import { apply, StepSpec } from '@cairn/core';
import { StepRunner, type RunnerEvent } from '@cairn/runner';
import { describe, expect, it } from 'vitest';
import { diffCounts, S3Store } from '../src/index.js';
import { clientOptions, freshPrefix, haveRgw, useGateway } from './helpers.js';

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** corpus → tokens → model, and corpus → stats: four path steps (identity = name + config + deps). */
function pipeline(config: { seed: number; lr: number }, calls: string[]) {
  const fn = (name: string) => () => {
    calls.push(name);
    return { name };
  };
  const corpus = new StepSpec({ name: 'corpus', fn: fn('corpus'), hashAttrs: { seed: config.seed } });
  const tokens = new StepSpec({ name: 'tokens', fn: fn('tokens'), deps: [corpus] });
  const model = new StepSpec({ name: 'model', fn: fn('model'), deps: [tokens], hashAttrs: { lr: config.lr } });
  const stats = new StepSpec({ name: 'stats', fn: fn('stats'), deps: [corpus] });
  return [model, stats];
}

describe.skipIf(!haveRgw)('S3Store end to end: a StepRunner on s3:// against a real RADOS Gateway', () => {
  const gw = useGateway();

  it('runs, reruns fully cached from one LIST, rebuilds what a config change touches; no credential anywhere', async () => {
    const rgw = gw.get();
    const store = new S3Store(clientOptions(rgw));
    const events: RunnerEvent[] = [];
    const runner = new StepRunner({ prefix: freshPrefix(rgw, 'e2e'), store, logger: quiet, onEvent: (e) => events.push(e) });
    const calls: string[] = [];
    const first = await runner.run(pipeline({ seed: 1, lr: 0.1 }, calls));
    expect(first.counts).toEqual({ succeeded: 4 });
    expect(calls.sort()).toEqual(['corpus', 'model', 'stats', 'tokens']);
    const [model] = await runner.load(pipeline({ seed: 1, lr: 0.1 }, calls).slice(0, 1));
    expect(model?.value).toEqual({ name: 'model' });
    expect(model?.path).toMatch(/^s3:\/\/cairn-test\/e2e-[0-9a-f]+\/model-[0-9a-f]+$/);

    calls.length = 0;
    const before = store.s3.counter.counts();
    const again = await runner.run(pipeline({ seed: 1, lr: 0.1 }, calls));
    expect(calls).toEqual([]);
    expect(again.counts).toEqual({ cached: 2 }); // the targets; nothing below them is even looked at
    // Besides the run journal (one PUT at the end; another every 2 s or more if the run lasts that long):
    const { PutObject: journalPuts, ...rerun } = diffCounts(store.s3.counter.counts(), before);
    expect(rerun).toEqual({ ListObjectsV2: 1 }); // records were cached when this runner wrote them
    expect(journalPuts).toBeGreaterThanOrEqual(1);

    const changed = await runner.run(pipeline({ seed: 1, lr: 0.2 }, calls));
    expect(calls).toEqual(['model']); // only the step whose config changed
    expect(changed.counts).toEqual({ succeeded: 1, cached: 2 }); // tokens (model's input) and stats
    calls.length = 0;
    await runner.run(pipeline({ seed: 2, lr: 0.2 }, calls));
    expect(calls.sort()).toEqual(['corpus', 'model', 'stats', 'tokens']); // the root changed: its dependents too

    // Records, statuses, leases and events never carry a credential.
    const { bucket } = store.s3.locate(runner.prefix());
    const page = await store.s3.objects.list(bucket, { prefix: store.s3.locate(runner.prefix()).key });
    const texts = await Promise.all(page.objects.map(async (o) => (await store.s3.objects.get(bucket, o.key))?.body.toString() ?? ''));
    for (const t of [...texts, JSON.stringify(events)]) {
      expect(t).not.toContain(rgw.secretAccessKey);
      expect(t).not.toContain(rgw.accessKeyId);
    }
    expect(page.objects.some((o) => o.key.endsWith('.executor_status.lock'))).toBe(false); // every lease released
  });

  it('requests of one cold no-op step alone: the lookup, the lease, the re-check, a fence before the record and one before the status, record, status, release', async () => {
    const rgw = gw.get();
    const store = new S3Store(clientOptions(rgw));
    const prefix = freshPrefix(rgw, 'cost');
    const runner = new StepRunner({ prefix, store, logger: quiet });
    await store.connect(prefix); // the once-per-prefix checks, counted apart
    await store.checkWritable(prefix);
    await store.markStore(prefix); // the store marker: one conditional PUT per prefix, also apart
    const before = store.s3.counter.counts();
    expect((await runner.run([new StepSpec({ name: 'noop', fn: () => undefined })])).counts).toEqual({ succeeded: 1 });
    // LISTs: the lookup, the re-check under the lease, whether the step has checkpoints to pull
    // (README "Checkpoints"), the two fences. An attempt that wrote no file uploads nothing and needs
    // no fence of its own. At concurrency the LISTs are shared by many steps (tools/bench/s3.bench.mjs:
    // 4.3 requests a step). PUTs: record, status and lease; the run journal's (once per run at the
    // end, or every 2 s or more) are counted apart.
    const { PutObject: puts = 0, ...rest } = diffCounts(store.s3.counter.counts(), before);
    expect(rest).toEqual({ DeleteObject: 1, ListObjectsV2: 5 });
    expect(puts - 3).toBeGreaterThanOrEqual(1);
    expect(puts - 3).toBeLessThanOrEqual(3);
  });

  it('a runner that lost its lease to a takeover commits nothing (the commit is fenced)', async () => {
    const rgw = gw.get();
    const prefix = freshPrefix(rgw, 'fence');
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    let leased!: () => void;
    const started = new Promise<void>((r) => (leased = r));
    const slow = apply({ name: 'slow', version: '1', fn: async () => (leased(), await gate, 'from A'), inputs: {} });
    // A never refreshes in time (as if paused); B sees its lease go stale after 300 ms.
    const a = new StepRunner({ prefix, store: new S3Store(clientOptions(rgw)), logger: quiet, leases: { heartbeatMs: 60_000 } });
    const runA = a.run([slow]).catch((e: unknown) => e);
    await started;
    const fast = apply({ name: 'slow', version: '1', fn: () => 'from B', inputs: {} });
    const b = new StepRunner({ prefix, store: new S3Store(clientOptions(rgw)), logger: quiet, leases: { heartbeatMs: 100, staleMs: 300, pollMs: 50 } });
    expect((await b.run([fast])).counts).toEqual({ succeeded: 1 });
    open();
    const resultA = await runA;
    expect(resultA).toMatchObject({ code: 'CAIRN_STEP_FAILED' });
    expect(JSON.stringify((resultA as { failures?: unknown }).failures ?? String(resultA))).toMatch(/CAIRN_LEASE_LOST|took over the lease/);
    const [built] = await b.load([fast]);
    expect(built?.value).toBe('from B'); // A replaced neither the record nor the status
  });
  // Runner processes at once, SIGKILLed, paused, and the gateway killed mid-run: tools/reliability/test/s3.test.ts.
});
