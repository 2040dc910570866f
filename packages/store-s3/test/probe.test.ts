/**
 * A provider that ignores conditional writes. s3rver (an in-process S3 imitation) is one: it
 * accepts If-None-Match and If-Match and overwrites anyway, which is exactly why it cannot test
 * leases (those run against the RADOS Gateway) and exactly what the probe must catch.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apply } from '@cairn/core';
import { StepRunner } from '@cairn/runner';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3Store } from '../src/index.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

describe('a provider without conditional writes (s3rver)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cairn-s3rver-'));
  let server: S3rver;
  let endpoint = '';
  beforeAll(async () => {
    server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: dir, configureBuckets: [{ name: 'plain', configs: [] }] });
    const addr = (await server.run()) as { port: number };
    endpoint = `http://127.0.0.1:${addr.port}`;
  });
  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const options = () => ({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }, cacheDir: false as const });

  it('is refused before anything runs, with the reason and the way out', async () => {
    let ran = 0;
    const runner = new StepRunner({ prefix: 's3://plain/p', store: new S3Store(options()) });
    const err = await runner.run([apply({ name: 'never', version: '1', fn: () => ++ran, inputs: {} })]).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'CAIRN_STORE' });
    expect((err as Error).message).toMatch(/does not enforce conditional writes \(If-None-Match: \* was ignored.*\), so leases on s3:\/\/plain\/p cannot be safe.*Nothing was run.*unsafeNoLeases: true/);
    expect(ran).toBe(0);
  });

  it('runs with unsafeNoLeases, and says so loudly', async () => {
    const warned: string[] = [];
    let ran = 0;
    const store = new S3Store({ ...options(), unsafeNoLeases: true, logger: { warn: (m) => warned.push(m) } });
    const runner = new StepRunner({ prefix: 's3://plain/q', store });
    const summary = await runner.run([apply({ name: 'once', version: '1', fn: () => ++ran, inputs: {} })]);
    expect(summary.counts).toEqual({ succeeded: 1 });
    expect(ran).toBe(1);
    expect(warned.join('\n')).toMatch(/unsafeNoLeases is set.*NOT enforced/);
    expect(warned.join('\n')).toMatch(/UNSAFE: .* does not enforce conditional writes/);
  });
});
