/**
 * Bucket content never writes outside the download directory, against a real RADOS Gateway: an
 * object whose key walks up with `..` under a built dependency is refused by `ctx.localInput`
 * with CAIRN_INVALID_PATH naming the key, and nothing appears outside the cache.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StepSpec } from '@cairn/core';
import { StepRunner } from '@cairn/runner';
import { afterAll, describe, expect, it } from 'vitest';
import { S3Store } from '../src/index.js';
import { clientOptions, freshPrefix, haveRgw, useGateway } from './helpers.js';

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

describe.skipIf(!haveRgw)('downloads refuse object keys that escape the cache, against a real RADOS Gateway', () => {
  const gw = useGateway();
  const tmp = mkdtempSync(join(tmpdir(), 'cairn-s3-escape-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('an object key dep-…/../../../../target: ctx.localInput refuses it, naming the key; nothing is written outside', async () => {
    const root = join(tmp, 'host');
    const cacheDir = join(root, 'cache');
    mkdirSync(cacheDir, { recursive: true });
    const store = new S3Store(clientOptions(gw.get(), { cacheDir }));
    const prefix = freshPrefix(gw.get(), 'escape');
    const dep = new StepSpec({ name: 'dep', fn: (out: string) => writeFileSync(join(out, 'ok.txt'), 'fine') });
    const runner = new StepRunner({ prefix, store, logger: quiet });
    await runner.run([dep]);
    // Someone with write access to the bucket adds objects that walk out of the download directory
    // (`{cacheDir}/{ns}/inputs/{id}.tmp-…`): four `..` from there is `root`. One beside the step's
    // metadata, one under each attempt prefix the step directory holds.
    const { bucket, key } = store.s3.locate(dep.outputPath(prefix));
    const page = await store.s3.objects.list(bucket, { prefix: `${key}/@` });
    const prefixes = [...new Set(page.objects.map((o) => o.key.slice(key.length + 1, o.key.indexOf('/', key.length + 1) + 1)))];
    const planted = [`${key}/../../../../escaped.txt`, ...prefixes.map((p) => `${key}/${p}../../../../escaped.txt`)];
    for (const k of planted) await store.s3.objects.put(bucket, k, 'owned');
    // The gateway keeps such keys as they are (no path normalisation on the way).
    const keys = (await store.s3.objects.list(bucket, { prefix: `${key}/` })).objects.map((o) => o.key);
    for (const k of planted) expect(keys).toContain(k);

    const reader = new StepSpec({ name: 'reader', deps: [dep], fn: async (_out: string, ctx) => ctx.localInput!(dep.outputPath(prefix)) });
    const err = await runner.run([reader]).catch((e: unknown) => e);
    const failure = (err as { failures?: { step: string; error: { code: string; message: string } }[] }).failures?.[0];
    expect(failure?.step).toBe('reader');
    expect(failure?.error.code).toBe('CAIRN_INVALID_PATH');
    expect(failure?.error.message).toContain('../../../../escaped.txt');
    expect(failure?.error.message).toMatch(/^Refusing to download s3:\/\/.*: its key ".*\.\.\/\.\.\/\.\.\/\.\.\/escaped\.txt" has a "\.\.", "\." or empty segment/);
    // Nothing outside the cache, and no partial download left inside it.
    const outside = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? (join(dir, e.name) === cacheDir ? [] : outside(join(dir, e.name))) : [join(dir, e.name)]));
    expect(outside(tmp)).toEqual([]);
    expect(existsSync(join(root, 'escaped.txt'))).toBe(false);
    store.s3.destroy();
  });
});
