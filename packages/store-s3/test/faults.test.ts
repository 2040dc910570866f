import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFaultProxy, type FaultProxy } from '../../../tools/testenv/fault-proxy.js';
import { S3Primitives } from '../src/index.js';
import { clientOptions, freshPrefix, haveRgw, primitives, useGateway } from './helpers.js';

/** Nothing a user can see may carry a credential. */
function expectNoSecrets(value: unknown, ...secrets: string[]): void {
  const e = value as Error & { cause?: unknown };
  const views = [String(e), e.message, e.stack ?? '', inspect(e, { depth: 10 }), JSON.stringify(e), JSON.stringify(e.cause ?? null), inspect(e.cause, { depth: 10 })];
  for (const v of views) for (const s of secrets) expect(v).not.toContain(s);
}

describe.skipIf(!haveRgw)('throttling and faults against a real RADOS Gateway behind a fault proxy', () => {
  const gw = useGateway();
  let proxy: FaultProxy;
  beforeAll(async () => {
    proxy = await startFaultProxy(gw.get().endpoint);
  });
  afterAll(async () => {
    await proxy?.close();
  });
  const viaProxy = (extra = {}) => primitives(gw.get(), { endpoint: proxy.endpoint, retry: { baseDelayMs: 5, throttleDelayMs: 10 }, ...extra });

  it('503 SlowDown, 500s and connection resets are retried until the request goes through', async () => {
    const s3 = viaProxy();
    const { bucket, key } = s3.locate(`${freshPrefix(gw.get())}/obj`);
    proxy.inject('slowdown', 3, { method: 'PUT' });
    expect(await s3.objects.put(bucket, key, 'v1')).toMatch(/^[0-9a-f]{32}$/);
    expect(s3.counter.counts().PutObject).toBe(4);
    proxy.inject('error500', 2, { method: 'GET' });
    expect((await s3.objects.get(bucket, key))?.body.toString()).toBe('v1');
    proxy.inject('reset', 2, { method: 'GET' });
    expect((await s3.objects.get(bucket, key))?.body.toString()).toBe('v1');
    expect(s3.counter.counts().GetObject).toBe(6);
    expect(proxy.pending()).toBe(0);
    s3.destroy();
  });

  it('a create-if-absent whose response was lost (reset after the write) is still ours', async () => {
    const s3 = viaProxy();
    const { bucket, key } = s3.locate(`${freshPrefix(gw.get())}/.executor_status.lock`);
    proxy.inject('reset-after', 1, { method: 'PUT' });
    const etag = await s3.objects.createIfAbsent(bucket, key, '{"token":"mine"}');
    expect(etag).not.toBeNull(); // the retry saw 412, read the object back and found our bytes
    expect(await s3.objects.createIfAbsent(bucket, key, '{"token":"other"}')).toBeNull();
    proxy.inject('reset-after', 1, { method: 'PUT' });
    expect(await s3.objects.replaceIfMatch(bucket, key, '{"token":"mine-2"}', etag as string)).not.toBeNull();
    s3.destroy();
  });

  it('a fault that outlasts the retries is one retryable CAIRN_STORE error naming the object', async () => {
    const s3 = viaProxy({ retry: { maxAttempts: 3, baseDelayMs: 5, throttleDelayMs: 5 } });
    const url = `${freshPrefix(gw.get())}/obj`;
    const { bucket, key } = s3.locate(url);
    proxy.inject('slowdown', 3, { method: 'PUT' });
    const err = await s3.objects.put(bucket, key, 'x').catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'CAIRN_STORE', retryable: true });
    expect((err as Error).message).toContain(url);
    expect((err as Error).message).toMatch(/SlowDown, HTTP 503, after 3 attempts/);
    s3.destroy();
  });

  it('a missing bucket is one clear error naming the bucket and the fix (a runner process on one: tools/reliability)', async () => {
    const s3 = new S3Primitives(clientOptions(gw.get()));
    const err = await s3.check('s3://no-such-bucket/pipelines/x').catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'CAIRN_STORE' });
    expect((err as Error).message).toMatch(/The bucket "no-such-bucket" of the store prefix s3:\/\/no-such-bucket\/pipelines\/x does not exist at http:\/\/127\.0\.0\.1:\d+\. Nothing was run\. Create it/);
    s3.destroy();
  });

  it('wrong credentials are one clear error that never shows a credential', async () => {
    const rgw = gw.get();
    const prefix = freshPrefix(rgw);
    const wrongSecret = 'not-the-secret-Zq81xxAA';
    for (const credentials of [
      { accessKeyId: rgw.accessKeyId, secretAccessKey: wrongSecret },
      { accessKeyId: 'CAIRNUNKNOWNKEYID0001', secretAccessKey: wrongSecret },
    ]) {
      const logged: string[] = [];
      const s3 = new S3Primitives({ ...clientOptions(rgw), credentials, logger: { warn: (m) => logged.push(m) } });
      const err = await s3.check(prefix).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'CAIRN_STORE' });
      expect((err as Error).message).toMatch(/refused the credentials for s3:\/\/cairn-test\/t-[0-9a-f]+ \((SignatureDoesNotMatch|InvalidAccessKeyId)\)\. Nothing was run\. Check AWS_ACCESS_KEY_ID/);
      expectNoSecrets(err, wrongSecret, credentials.accessKeyId, rgw.secretAccessKey);
      expect(logged.join('\n')).not.toContain(wrongSecret);
      if (process.env.CAIRN_TEST_DEBUG) console.log((err as Error).message, inspect((err as Error).cause));
      s3.destroy();
    }
  });

  it('an unreachable endpoint is one clear error, after bounded retries', async () => {
    const rgw = gw.get();
    const t0 = Date.now();
    const s3 = new S3Primitives({ ...clientOptions(rgw), endpoint: 'http://127.0.0.1:9', retry: { maxAttempts: 3, baseDelayMs: 20 } });
    const err = await s3.check(`s3://${rgw.bucket}/p`).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'CAIRN_STORE', retryable: true });
    expect((err as Error).message).toMatch(/Cannot reach the object store at http:\/\/127\.0\.0\.1:9 for s3:\/\/cairn-test\/p \(ECONNREFUSED/);
    expect(Date.now() - t0).toBeLessThan(10_000);
    if (process.env.CAIRN_TEST_DEBUG) console.log((err as Error).message);
    expectNoSecrets(err, rgw.secretAccessKey, rgw.accessKeyId);
    s3.destroy();
  });
});
