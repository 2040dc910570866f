import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { diffCounts, type S3Primitives } from '../src/index.js';
import { freshPrefix, haveRgw, primitives, useGateway } from './helpers.js';

/** What a runner's commit leaves for a built step: its record, then its status. */
async function builtByHand(s3: S3Primitives, url: string, record: Record<string, unknown>): Promise<void> {
  const { bucket, key } = s3.locate(url);
  await s3.objects.put(bucket, `${key}/.artifact.json`, JSON.stringify(record), 'application/json');
  await s3.objects.put(bucket, `${key}/.executor_status`, 'SUCCESS', 'text/plain');
}

const MiB = 1024 * 1024;
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe.skipIf(!haveRgw)('outputs: verified uploads and cached downloads against a real RADOS Gateway', () => {
  const gw = useGateway();
  const tmp = mkdtempSync(join(tmpdir(), 'cairn-s3-out-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  // One local output directory: a 50 MiB file (multipart, 7 parts of 8 MiB) and small nested ones.
  const big = randomBytes(50 * MiB);
  const local = join(tmp, 'out');
  mkdirSync(join(local, 'shards', 'b'), { recursive: true });
  writeFileSync(join(local, 'model.bin'), big);
  writeFileSync(join(local, 'shards', 'a.txt'), 'alpha');
  writeFileSync(join(local, 'shards', 'b', 'c.json'), '{"c":1}');
  writeFileSync(join(local, 'empty'), '');

  it('uploads a directory (multipart above the part size), verifying size and checksum of every file', { timeout: 120_000 }, async () => {
    const s3 = primitives(gw.get());
    const url = `${freshPrefix(gw.get())}/train-0123abcd`;
    const files = await s3.upload(local, url);
    expect(files.map((f) => [f.path, f.size, f.verified])).toEqual([
      ['empty', 0, 'size+md5'],
      ['model.bin', 50 * MiB, 'size+md5'],
      ['shards/a.txt', 5, 'size+md5'],
      ['shards/b/c.json', 7, 'size+md5'],
    ]);
    expect(files[1]?.etag).toMatch(/-7$/); // multipart: the MD5 of the parts' MD5s, -7
    expect(files[1]?.sha256).toBe(sha(big));
    const counts = s3.counter.counts();
    expect(counts.UploadPart).toBe(7);
    expect(counts.CompleteMultipartUpload).toBe(1);
    const got = await s3.objects.get(s3.locate(url).bucket, `${s3.locate(url).key}/model.bin`);
    expect(sha(got?.body as Buffer)).toBe(sha(big));
    s3.destroy();
  });

  it('fetches a built dependency to a local directory once per host (per record identity)', { timeout: 120_000 }, async () => {
    const s3 = primitives(gw.get(), { cacheDir: join(tmp, 'cache') });
    const url = `${freshPrefix(gw.get())}/dep-4567`;
    await expect(s3.localInput(url)).rejects.toThrow(/has no .executor_status: it is not a built output/);
    await s3.upload(local, url);
    await builtByHand(s3, url, { cairn: 1, name: 'dep', status: 'SUCCESS' });
    const before = s3.counter.counts();
    // Three readers at once in this process, and a second "process" (its own primitives) on the same host.
    const other = primitives(gw.get(), { cacheDir: join(tmp, 'cache') });
    const gets = () => (diffCounts(s3.counter.counts(), before).GetObject ?? 0) + (other.counter.counts().GetObject ?? 0);
    const dirs = await Promise.all([s3.localInput(url), s3.localInput(url), s3.localInput(url), other.localInput(url)]);
    expect(new Set(dirs).size).toBe(1);
    expect(s3.inputs.downloads + other.inputs.downloads).toBe(1);
    const dir = dirs[0] as string;
    expect(sha(readFileSync(join(dir, 'model.bin')))).toBe(sha(big));
    expect(readFileSync(join(dir, 'shards', 'b', 'c.json'), 'utf8')).toBe('{"c":1}');
    expect(() => readFileSync(join(dir, '.executor_status'))).toThrow(); // metadata is not an output
    // One GET per output file, once; the record (which names the committed objects) once per process
    // that downloads or waits before the cache is complete: the second process may find it complete already.
    expect(gets()).toBeGreaterThanOrEqual(4 + 1);
    expect(gets()).toBeLessThanOrEqual(4 + 2);
    // Again: served from the cache (one LIST to learn the identity).
    expect(await s3.localInput(url)).toBe(dir);
    expect(s3.inputs.downloads + other.inputs.downloads).toBe(1);
    // Rebuilt (a new record): a new identity, downloaded again.
    await builtByHand(s3, url, { cairn: 1, name: 'dep', status: 'SUCCESS', runId: 'again' });
    expect(await s3.localInput(url)).not.toBe(dir);
    s3.destroy();
    other.destroy();
  });

  it('direct writes: a step gets the configured client, bucket and key of its output location', async () => {
    const s3 = primitives(gw.get());
    const url = `${freshPrefix(gw.get())}/direct-89ab`;
    const d = s3.direct(url);
    const { PutObjectCommand } = await import('@aws-sdk/client-s3');
    await d.client.send(new PutObjectCommand({ Bucket: d.bucket, Key: `${d.key}part-0`, Body: 'direct' }));
    expect((await s3.objects.get(d.bucket, `${d.key}part-0`))?.body.toString()).toBe('direct');
    s3.destroy();
  });
});
