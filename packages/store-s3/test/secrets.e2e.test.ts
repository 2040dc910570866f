/**
 * Secrets with the S3 store, against a real RADOS Gateway: `apply` and command steps that need
 * `secret('HF_TOKEN')`, run on the runner's host (threads) and on a real sshd without a shared
 * filesystem, get the value (their outputs, uploaded to the bucket, hold its hash) while no
 * object in the bucket (records, statuses, logs, outputs, leases) and no key in its listing holds it.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apply, lower, secret, type StepSpec } from '@cairn/core';
import { createSshExecutor } from '@cairn/remote-ssh';
import { StepRunner } from '@cairn/runner';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashCommand } from '../../../tools/testenv/grid-secrets.js';
import { sha256 } from '../../../tools/testenv/secret-leaks.js';
import { hashToken } from '../../../tools/testenv/secret-steps.mjs';
import { sshdOrSkip, startSshd, testHostOptions, type SshdInstance } from '../../../tools/testenv/sshd.js';
import { s3StoreFactory, S3Store } from '../src/index.js';
import { committedKey, freshPrefix, haveRgw, useGateway } from './helpers.js';

const haveSshd = haveRgw && sshdOrSkip('the secrets-on-S3 tests');
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

describe.skipIf(!haveSshd)('secrets on s3://, against a real RADOS Gateway and a real sshd', () => {
  const gw = useGateway();
  let sshd: SshdInstance;
  const vault = mkdtempSync(join(tmpdir(), 'cairn-vault-'));
  beforeAll(async () => {
    sshd = await startSshd();
  }, 60_000);
  afterAll(async () => {
    await sshd?.stop();
    rmSync(vault, { recursive: true, force: true });
  });

  it('steps on threads and SSH get HF_TOKEN; no object or key in the bucket holds it', { timeout: 180_000 }, async () => {
    const token = `hf_${randomBytes(16).toString('hex')}`;
    const file = join(vault, 'secrets.env');
    writeFileSync(file, `HF_TOKEN=${token}\n`, { mode: 0o600 });
    const rgw = gw.get();
    const prefix = freshPrefix(rgw, 'secrets');
    const ssh = createSshExecutor({ hosts: [testHostOptions(sshd, 'h')], sharedFs: false, pollIntervalMs: 100 });
    const store = { endpoint: rgw.endpoint, region: rgw.region, credentials: { accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey }, cacheDir: false as const };
    const runner = new StepRunner({ prefix, stores: [s3StoreFactory(store)], executors: [ssh], logger: quiet, secrets: { providers: [{ type: 'file', path: file }] } });
    const worker = (name: string, executor: string) => apply({ name, version: 'v1', fn: hashToken, inputs: { token: secret('HF_TOKEN'), holdMs: 200 }, executor });
    const steps = [worker('on-threads', 'threads'), worker('on-ssh', 'ssh'), hashCommand('cmd-local', 'process'), hashCommand('cmd-ssh', 'ssh')];
    const summary = await runner.run(steps, { handleSigint: false });
    expect(summary.counts).toEqual({ succeeded: 4 });

    const s3 = (runner.store as S3Store).s3;
    for (const step of steps) {
      const url = (lower([step])[0] as StepSpec).outputPath(prefix);
      const { bucket } = s3.locate(url);
      expect((await s3.objects.get(bucket, await committedKey(s3, url, 'hash')))?.body.toString().trim(), step.name).toBe(sha256(token));
    }
    // Every object of the bucket, key and body.
    const keys: string[] = [];
    let next: string | undefined;
    do {
      const page = await s3.objects.list(rgw.bucket, { continuationToken: next });
      keys.push(...page.objects.map((o) => o.key));
      next = page.truncated ? page.next : undefined;
    } while (next !== undefined);
    expect(keys.length).toBeGreaterThan(8);
    expect(keys.filter((k) => k.includes(token))).toEqual([]);
    const holding: string[] = [];
    for (const key of keys) if ((await s3.objects.get(rgw.bucket, key))?.body.includes(token)) holding.push(key);
    expect(holding).toEqual([]);
  });
});
