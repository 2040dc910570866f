import { HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { probeProvider, unquote } from '../src/index.js';
import { freshPrefix, haveRgw, primitives, useGateway } from './helpers.js';

describe.skipIf(!haveRgw)('object primitives against a real RADOS Gateway', () => {
  const gw = useGateway();

  it('puts, gets, heads, deletes whole objects; absent objects are null', async () => {
    const s3 = primitives(gw.get());
    const { bucket, key } = s3.locate(`${freshPrefix(gw.get())}/a.txt`);
    const etag = await s3.objects.put(bucket, key, 'hello');
    expect(etag).toBe('5d41402abc4b2a76b9719d911017c592'); // MD5 of "hello", unquoted
    const got = await s3.objects.get(bucket, key);
    expect(got?.body.toString()).toBe('hello');
    expect(got?.etag).toBe(etag);
    expect((await s3.objects.head(bucket, key))?.size).toBe(5);
    await s3.objects.delete(bucket, key);
    expect(await s3.objects.get(bucket, key)).toBeNull();
    expect(await s3.objects.head(bucket, key)).toBeNull();
    await s3.objects.delete(bucket, key); // deleting an absent object is fine
    s3.destroy();
  });

  it('create-if-absent: exactly one of 16 racers wins and its bytes are kept', async () => {
    const s3 = primitives(gw.get());
    const { bucket, key } = s3.locate(`${freshPrefix(gw.get())}/race`);
    const results = await Promise.all(Array.from({ length: 16 }, (_, i) => s3.objects.createIfAbsent(bucket, key, `racer-${i}`)));
    const winners = results.map((r, i) => (r === null ? -1 : i)).filter((i) => i >= 0);
    expect(winners).toHaveLength(1);
    expect((await s3.objects.get(bucket, key))?.body.toString()).toBe(`racer-${winners[0]}`);
    s3.destroy();
  });

  it('replace-if-ETag: sends the ETag unquoted (the gateway refuses the quoted form HEAD returns)', async () => {
    const s3 = primitives(gw.get());
    const { bucket, key } = s3.locate(`${freshPrefix(gw.get())}/lease`);
    const first = await s3.objects.put(bucket, key, 'v1');
    // The pitfall itself, with the raw SDK: If-Match with the quoted ETag is refused.
    const quoted = (await s3.client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }))).ETag as string;
    expect(quoted.startsWith('"')).toBe(true);
    await expect(s3.client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: 'x', IfMatch: quoted }))).rejects.toMatchObject({ $metadata: { httpStatusCode: 412 } });
    // Through the primitive, quoted or not, it works.
    const second = await s3.objects.replaceIfMatch(bucket, key, 'v2', quoted);
    expect(second).not.toBeNull();
    expect(await s3.objects.replaceIfMatch(bucket, key, 'v3', first)).toBeNull(); // stale ETag
    expect(await s3.objects.replaceIfMatch(bucket, `${key}-absent`, 'v3', first)).toBeNull();
    // Two replacers of one ETag: one wins.
    const both = await Promise.all([s3.objects.replaceIfMatch(bucket, key, 'a', second as string), s3.objects.replaceIfMatch(bucket, key, 'b', second as string)]);
    expect(both.filter((r) => r !== null)).toHaveLength(1);
    expect(unquote('W/"abc"')).toBe('abc');
    s3.destroy();
  });

  it('the probe finds conditional writes on the gateway, and that it ignores If-Match on DELETE', async () => {
    const s3 = primitives(gw.get());
    const { bucket, key } = s3.locate(`${freshPrefix(gw.get())}/`);
    const caps = await probeProvider(s3.objects, bucket, key);
    expect(caps).toEqual({ conditionalWrites: true, conditionalDelete: false });
    // Why conditionalDelete is false: a DELETE with a wrong If-Match deletes anyway.
    await s3.objects.put(bucket, `${key}victim`, 'x');
    expect(await s3.objects.deleteIfMatch(bucket, `${key}victim`, '0123456789abcdef0123456789abcdef')).toBe(true);
    expect(await s3.objects.head(bucket, `${key}victim`)).toBeNull();
    // The probe cleaned up after itself.
    expect((await s3.objects.list(bucket, { prefix: key })).objects).toEqual([]);
    s3.destroy();
  });

  it('lists 1,000 keys a page, with continuation and delimiters', async () => {
    const s3 = primitives(gw.get());
    const { bucket, key } = s3.locate(`${freshPrefix(gw.get())}/`);
    await Promise.all(Array.from({ length: 1_203 }, (_, i) => s3.objects.put(bucket, `${key}d${String(i % 3)}/k${String(i).padStart(4, '0')}`, '')));
    const before = s3.counter.counts().ListObjectsV2 ?? 0;
    let token: string | undefined;
    let n = 0;
    do {
      const page = await s3.objects.list(bucket, { prefix: key, continuationToken: token });
      n += page.objects.length;
      token = page.truncated ? page.next : undefined;
    } while (token);
    expect(n).toBe(1_203);
    expect((s3.counter.counts().ListObjectsV2 ?? 0) - before).toBe(2);
    const grouped = await s3.objects.list(bucket, { prefix: key, delimiter: '/' });
    expect(grouped.prefixes).toEqual([`${key}d0/`, `${key}d1/`, `${key}d2/`]);
    s3.destroy();
  });
});
