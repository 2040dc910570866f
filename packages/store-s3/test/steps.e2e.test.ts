/**
 * Steps on an s3:// prefix chosen by scheme (`stores: [s3StoreFactory()]`), against a real RADOS
 * Gateway: a 50 MiB output through the local directory (uploaded and verified at the commit), a
 * direct write through `ctx.store`, and dependencies fetched with `ctx.localInput(dep)` once per
 * host, on the inline, threads and process executors.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StepSpec } from '@cairn/core';
import { StepRunner } from '@cairn/runner';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStepAccess, diffCounts, s3StoreFactory, S3Store, stepS3 } from '../src/index.js';
import { readInputs, writeDirect, writeLocal } from './fixtures/steps.mjs';
import { clientOptions, freshPrefix, haveRgw, useGateway } from './helpers.js';

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
const MiB = 1024 * 1024;

describe.skipIf(!haveRgw)('steps on s3:// against a real RADOS Gateway: local outputs, ctx.store, ctx.localInput', () => {
  const gw = useGateway();
  const tmp = mkdtempSync(join(tmpdir(), 'cairn-s3-steps-'));
  const saved: Record<string, string | undefined> = {};
  beforeAll(() => {
    // Workers (threads, processes) build their own client from the standard AWS configuration.
    for (const [k, v] of Object.entries(gw.get().env)) {
      saved[k] = process.env[k];
      process.env[k] = v;
    }
  });
  afterAll(() => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    rmSync(tmp, { recursive: true, force: true });
  });

  /** A runner that finds its store by the prefix's scheme; the store options come as storeOptions, as from a config file. */
  const runnerOn = (prefix: string, extra: Record<string, unknown> = {}) => {
    const rgw = gw.get();
    return new StepRunner({ prefix, stores: [s3StoreFactory()], storeOptions: { s3: { endpoint: rgw.endpoint, region: rgw.region, cacheDir: join(tmp, 'cache') } }, logger: quiet, ...extra });
  };

  it('the runner picks the S3 store by scheme; its options are checked (a misspelt key names the right one)', () => {
    const runner = runnerOn(freshPrefix(gw.get()));
    expect(runner.store).toBeInstanceOf(S3Store);
    let err: unknown;
    try {
      new StepRunner({ prefix: 's3://b-x/y', stores: [s3StoreFactory()], storeOptions: { s3: { endpont: 'http://x' } } });
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ code: 'CAIRN_UNKNOWN_OPTION', message: expect.stringMatching(/^storeOptions\.s3: unknown option "endpont"; did you mean "endpoint"\?/) });
    expect(() => s3StoreFactory({ credentials: { accessKeyId: 'AKIDSECRETLOOKING', secretAccessKey: 7 as never } })).toThrow(/^s3StoreFactory\(\): credentials\.secretAccessKey must be a non-empty string, got a value of type number\.$/);
    expect(() => new S3Store({ maxSockets: 0 })).toThrow(/new S3Store\(\): maxSockets must be a positive integer, got 0/);
  });

  it.each(['inline', 'threads', 'process'] as const)(
    '%s: a 50 MiB local output, a direct write and both fetched by a dependent; a rerun is cached from one LIST',
    { timeout: 180_000 },
    async (executor) => {
      const prefix = freshPrefix(gw.get(), executor);
      const runner = runnerOn(prefix);
      const model = new StepSpec({ name: 'model', fn: writeLocal, executor, resources: { hints: { mib: 50 } }, hashAttrs: { executor } });
      const direct = new StepSpec({ name: 'direct', fn: writeDirect, executor, hashAttrs: { executor } });
      const report = new StepSpec({ name: 'report', fn: readInputs, executor, deps: [model, direct] });
      const [r, m] = await runner.load([report, model]);
      const built = m?.value as { sha256: string; bytes: number };
      expect(built.bytes).toBe(50 * MiB);
      expect(r?.value).toEqual({
        model: { url: model.outputPath(prefix), local: true, same: true, model: built.sha256, part: null },
        direct: { url: direct.outputPath(prefix), local: true, same: true, model: null, part: 'direct from direct' },
      });
      // The upload is in the bucket under the attempt's prefix the record names, verified; the
      // direct write is where the step put it (ctx.store.key: the same attempt prefix).
      const store = runner.store as S3Store;
      const { bucket, key } = store.s3.locate(model.outputPath(prefix));
      const { prefix: objects } = await store.s3.committedObjects(model.outputPath(prefix));
      expect(objects).toMatch(/^@.+\/$/);
      const head = await store.s3.objects.head(bucket, `${key}/${objects}model.bin`);
      expect(head?.size).toBe(50 * MiB);
      expect(head?.etag).toMatch(/-7$/); // multipart, 7 parts of 8 MiB
      const got = await store.s3.objects.get(bucket, `${key}/${objects}model.bin`);
      expect(createHash('sha256').update(got?.body as Buffer).digest('hex')).toBe(built.sha256);
      const d = store.s3.locate(direct.outputPath(prefix));
      const { prefix: directObjects } = await store.s3.committedObjects(direct.outputPath(prefix));
      expect((await store.s3.objects.get(d.bucket, `${d.key}/${directObjects}part-0.txt`))?.body.toString()).toBe('direct from direct');
      expect((await store.s3.objects.get(d.bucket, `${d.key}/.executor_status`))?.body.toString()).toBe('SUCCESS');

      const before = store.s3.counter.counts();
      expect((await runner.run([report])).counts).toEqual({ cached: 1 });
      // Besides the one LIST: the run journal, one PUT at the end (another every 2 s or more if the run lasts that long).
      const { PutObject: journalPuts, ...reads } = diffCounts(store.s3.counter.counts(), before);
      expect(reads).toEqual({ ListObjectsV2: 1 });
      expect(journalPuts).toBeGreaterThanOrEqual(1);
    },
  );

  it('a dependency is downloaded once per host: two dependents on threads share one download', { timeout: 120_000 }, async () => {
    const prefix = freshPrefix(gw.get(), 'shared');
    const cacheDir = join(tmp, 'shared-cache');
    const rgw = gw.get();
    const runner = new StepRunner({ prefix, stores: [s3StoreFactory({ endpoint: rgw.endpoint, region: rgw.region, cacheDir })], logger: quiet });
    const model = new StepSpec({ name: 'model', fn: writeLocal, resources: { hints: { mib: 2 } } });
    const readers = [1, 2, 3].map((i) => new StepSpec({ name: `reader${i}`, fn: readInputs, deps: [model], executor: i === 1 ? 'inline' : 'threads' }));
    const loaded = await runner.load(readers);
    const sha = (loaded[0]?.value as { model: { model: string } }).model.model;
    for (const l of loaded) expect((l.value as { model: { model: string } }).model.model).toBe(sha);
    // One directory under the host's cache holds the dependency, whichever thread fetched it first.
    const [ns] = readdirSync(cacheDir);
    const cached = readdirSync(join(cacheDir, ns as string, 'inputs'));
    expect(cached).toHaveLength(1); // no second copy, no leftover lock or partial download
    // A worker's builder (as a task names it) finds the same directory without downloading.
    const access = await createStepAccess({ endpoint: rgw.endpoint, region: rgw.region, cacheDir }, model.outputPath(prefix));
    expect(await access.localInput(model.outputPath(prefix))).toBe(join(cacheDir, ns as string, 'inputs', cached[0] as string));
  });

  it('stepS3 names the step and the fix when the store is not S3', () => {
    expect(() => stepS3({ name: 'train', store: undefined })).toThrow(/^Step "train": ctx\.store is not an S3 store's \(absent\); run it with an s3:\/\/ prefix \(stores: \[s3StoreFactory\(\)\]\), or write its outputs to ctx\.outputPath\.$/);
  });
});
