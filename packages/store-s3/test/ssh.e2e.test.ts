/**
 * SSH hosts with no shared filesystem on an s3:// prefix, against a real sshd and a real RADOS
 * Gateway: the SSH executor in staged mode (`sharedFs: false`) writes the step's output in the
 * host's job directory, downloads it to the runner, and the commit uploads it to the bucket.
 * A step there that fetches its dependency with `ctx.localInput` needs `@cairn/store-s3` and AWS
 * credentials on the host: without the package it fails with one clear error naming the fix;
 * with both (installed beside the host's work directory, credentials in the login user's
 * `~/.aws/credentials`) it downloads the dependency from the bucket itself.
 */
import { chownSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { command, input, OUT, StepSpec } from '@cairn/core';
import { createSshExecutor } from '@cairn/remote-ssh';
import { StepRunner } from '@cairn/runner';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sshdOrSkip, startSshd, testHostOptions, type SshdInstance } from '../../../tools/testenv/sshd.js';
import { s3StoreFactory, S3Store } from '../src/index.js';
import { committedKey, freshPrefix, haveRgw, useGateway } from './helpers.js';

const STEPS = new URL('./fixtures/ssh-steps.mjs', import.meta.url).href;
const PACKAGE = fileURLToPath(new URL('..', import.meta.url));
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
const haveSshd = haveRgw && sshdOrSkip('the SSH-on-S3 tests');

describe.skipIf(!haveSshd)('SSH hosts without a shared filesystem on s3://, against a real sshd and a real RADOS Gateway', () => {
  const gw = useGateway();
  let sshd: SshdInstance;
  const home = () => sshd.account.home;
  beforeAll(async () => {
    sshd = await startSshd();
  }, 60_000);
  afterAll(async () => {
    if (sshd) rmSync(join(home(), '.aws'), { recursive: true, force: true });
    await sshd?.stop();
  });

  const runnerOn = (prefix: string) => {
    const rgw = gw.get();
    const ssh = createSshExecutor({ hosts: [testHostOptions(sshd, 'gpu1')], sharedFs: false, pollIntervalMs: 50 });
    // The runner's own credentials: explicit (they never travel to the host).
    const store = { endpoint: rgw.endpoint, region: rgw.region, credentials: { accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey }, cacheDir: false as const };
    return new StepRunner({ prefix, stores: [s3StoreFactory(store)], executors: [ssh], logger: quiet });
  };

  it('staged mode: the output written on the host reaches the bucket through the runner, verified at the commit', { timeout: 120_000 }, async () => {
    const prefix = freshPrefix(gw.get(), 'ssh');
    const runner = runnerOn(prefix);
    const produce = new StepSpec({ name: 'produce', executor: 'ssh', ref: { module: STEPS, export: 'produce' } });
    const [p] = await runner.load([produce], { handleSigint: false });
    expect(p?.value).toBe(sshd.user); // it ran on the host, as the login user
    const s3 = (runner.store as S3Store).s3;
    const { bucket, key } = s3.locate(produce.outputPath(prefix));
    expect((await s3.objects.get(bucket, await committedKey(s3, produce.outputPath(prefix), 'model.txt')))?.body.toString()).toBe(`written by ${sshd.user}\n`);
    expect((await s3.objects.get(bucket, `${key}/.executor_status`))?.body.toString()).toBe('SUCCESS');
  });

  it('command steps in staged mode: the program on the host (no Node, no credentials) reads its s3:// dependency as a local directory the runner fetched and uploaded; its output reaches the bucket', { timeout: 120_000 }, async () => {
    const prefix = freshPrefix(gw.get(), 'ssh-cmd');
    const make = command({ name: 'make', version: 'v1', executor: 'ssh', program: 'sh', args: ['-c', 'mkdir -p "$1/sub" && printf "a b c\\nd e\\n" > "$1/data.txt" && echo nested > "$1/sub/note.txt"', 'make', OUT] });
    const count = command({
      name: 'count',
      version: 'v1',
      executor: 'ssh',
      program: 'sh',
      args: ['-c', 'n=$(cat "$1/data.txt" | wc -w) && echo "$n" > "$2/count.txt" && printf \'{"result": {"words": %s, "note": "%s", "data": "%s", "env": "%s"}}\' "$n" "$(cat "$1/sub/note.txt")" "$1" "$DATA" > "$CAIRN_RESULT"', 'count', input('data'), OUT],
      inputs: { data: make },
      env: { DATA: input('data') },
    });
    const runner = runnerOn(prefix);
    const [c, m] = await runner.load([count, make], { handleSigint: false });
    expect(m!.path.startsWith('s3://')).toBe(true);
    const value = c!.value as { words: number; note: string; data: string; env: string };
    expect(value).toMatchObject({ words: 5, note: 'nested' });
    // A directory on the host (uploaded there by the runner), the same in argv and env; never the URL.
    expect(value.data.startsWith('/')).toBe(true);
    expect(value.env).toBe(value.data);
    const s3 = (runner.store as S3Store).s3;
    const { bucket } = s3.locate(c!.path);
    expect((await s3.objects.get(bucket, await committedKey(s3, c!.path, 'count.txt')))?.body.toString()).toBe('5\n');
    expect((await runner.run([count], { handleSigint: false })).counts).toEqual({ cached: 1 });
  });

  it('ctx.localInput on the host: one clear error without @cairn/store-s3 there; with it and credentials, the host downloads the dependency itself', { timeout: 180_000 }, async () => {
    const prefix = freshPrefix(gw.get(), 'ssh-in');
    const produce = new StepSpec({ name: 'produce', executor: 'ssh', ref: { module: STEPS, export: 'produce' }, hashAttrs: { p: prefix } });
    const consume = new StepSpec({ name: 'consume', executor: 'ssh', deps: [produce], ref: { module: STEPS, export: 'consume' } });
    const err = await runnerOn(prefix).run([consume], { handleSigint: false }).catch((e: unknown) => e);
    const failure = (err as { failures?: { step: string; error: { code: string; message: string } }[] }).failures?.[0];
    expect(failure?.step).toBe('consume');
    expect(failure?.error.code).toBe('CAIRN_STORE');
    expect(failure?.error.message).toMatch(/^Step "consume": the store's step access \(@cairn\/store-s3#createStepAccess, for ctx\.store and ctx\.localInput\) cannot be loaded where the step runs: .*Install @cairn\/store-s3 there, or run the step on an executor on the runner's host\./s);

    // Install the package where the host's worker resolves it (beside its work directory), and
    // give the login user credentials the standard way.
    const rgw = gw.get();
    const modules = join(sshd.workDir, 'node_modules', '@cairn');
    mkdirSync(modules, { recursive: true });
    symlinkSync(PACKAGE, join(modules, 'store-s3'));
    const aws = join(home(), '.aws');
    mkdirSync(aws, { recursive: true, mode: 0o700 });
    writeFileSync(join(aws, 'credentials'), `[default]\naws_access_key_id = ${rgw.accessKeyId}\naws_secret_access_key = ${rgw.secretAccessKey}\n`, { mode: 0o600 });
    for (const p of [aws, join(aws, 'credentials'), join(sshd.workDir, 'node_modules'), modules]) chownSync(p, sshd.account.uid, sshd.account.gid);

    const [c] = await runnerOn(prefix).load([consume], { handleSigint: false });
    expect(c?.value).toEqual({ model: `written by ${sshd.user}\n`, user: sshd.user, from: produce.outputPath(prefix) });
    const s3 = (runnerOn(prefix).store as S3Store).s3;
    const { bucket } = s3.locate(consume.outputPath(prefix));
    expect((await s3.objects.get(bucket, await committedKey(s3, consume.outputPath(prefix), 'report.txt')))?.body.toString()).toBe(`read: written by ${sshd.user}\n`);
  });
});
