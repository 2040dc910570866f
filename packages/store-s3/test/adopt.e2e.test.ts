/**
 * Adopted artifacts on an s3:// prefix, against a real RADOS Gateway: a data set already in the
 * bucket is adopted by URL, dependents get the URL as its path, nothing is written under it
 * (object listing before and after), and a missing URL fails before any dependent starts.
 */
import { adopt, apply, type ArtifactKind, lower, type StepContext } from '@cairn/core';
import { StepRunner, StepRunError } from '@cairn/runner';
import { describe, expect, it } from 'vitest';
import { s3StoreFactory, S3Store } from '../src/index.js';
import { freshPrefix, haveRgw, useGateway } from './helpers.js';

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

describe.skipIf(!haveRgw)('adopt() of an s3:// source against a real RADOS Gateway', () => {
  const gw = useGateway();
  const runnerOn = (prefix: string) => {
    const rgw = gw.get();
    return new StepRunner({ prefix, stores: [s3StoreFactory()], storeOptions: { s3: { endpoint: rgw.endpoint, region: rgw.region, credentials: { accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey }, cacheDir: false } }, logger: quiet });
  };

  it('dependents get the URL and load it with a kind that reads URLs; nothing is written under it', { timeout: 120_000 }, async () => {
    const prefix = freshPrefix(gw.get(), 'adopt');
    const runner = runnerOn(prefix);
    const store = runner.store as S3Store;
    const source = freshPrefix(gw.get(), 'dataset');
    const { bucket, key } = store.s3.locate(source);
    await store.s3.objects.put(bucket, `${key}/shard-0.txt`, Buffer.from('alpha beta'));
    await store.s3.objects.put(bucket, `${key}/shard-1.txt`, Buffer.from('gamma'));
    const listing = async () => (await store.browse.listFiles(source)).map((f) => `${f.path} ${f.lastModified}`).sort();
    const before = await listing();
    expect(before).toHaveLength(2);

    // A kind that reads the URL itself (object-store sources are not downloaded as step outputs).
    const shards: ArtifactKind<string[]> = {
      name: 's3-shards',
      load: async (url) => (await store.browse.listFiles(url)).map((f) => f.path.slice(url.length + 1)).sort(),
    };
    const corpus = adopt({ name: 'corpus', version: '2024.07', source, kind: shards, config: { split: 'train' } });
    const count = apply({
      name: 'count',
      fn: async ({ corpus: url }: { corpus: string }, ctx: StepContext) => ({ url, same: ctx.path(corpus) === url, shards: await ctx.resolved(corpus) }),
      version: 'v1',
      inputs: { corpus },
    });
    const [c] = await runner.load([count]);
    expect(c.value).toEqual({ url: source, same: true, shards: ['shard-0.txt', 'shard-1.txt'] });
    // The adopted artifact's status and record are under the prefix, at its own path.
    const home = store.s3.locate(lower(corpus).outputPath(prefix));
    expect(home.key.startsWith(store.s3.locate(prefix).key)).toBe(true);
    expect((await store.s3.objects.get(home.bucket, `${home.key}/.executor_status`))?.body.toString()).toBe('SUCCESS');
    expect(await listing()).toEqual(before);
  });

  it('a missing s3:// source is CAIRN_ADOPT_MISSING before any dependent starts, and nothing is created there', { timeout: 120_000 }, async () => {
    const prefix = freshPrefix(gw.get(), 'adopt-missing');
    const runner = runnerOn(prefix);
    const store = runner.store as S3Store;
    const source = freshPrefix(gw.get(), 'nowhere');
    let started = 0;
    const user = apply({ name: 'user', fn: () => void started++, version: 'v1', inputs: { d: adopt({ name: 'ckpt', version: 'v1', source }) } });
    const err = await runner.run([user]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StepRunError);
    expect((err as StepRunError).failures.map((f) => (f.error as { code: string }).code)).toEqual(['CAIRN_ADOPT_MISSING']);
    expect(started).toBe(0);
    expect(await store.browse.listFiles(source)).toEqual([]);
  });
});
