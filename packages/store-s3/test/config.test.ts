import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkS3StoreOptions, parseS3Url, S3Primitives, s3StoreFactory } from '../src/index.js';
import { freshPrefix, haveRgw, useGateway } from './helpers.js';

const AWS_VARS = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_PROFILE', 'AWS_REGION', 'AWS_ENDPOINT_URL', 'AWS_ENDPOINT_URL_S3', 'AWS_CONFIG_FILE', 'AWS_SHARED_CREDENTIALS_FILE'];

describe('s3:// URLs', () => {
  it('parses bucket and key; rejects what is not an s3 URL, naming the form', () => {
    expect(parseS3Url('s3://my-bucket/a/b/')).toEqual({ bucket: 'my-bucket', key: 'a/b/' });
    expect(parseS3Url('s3://my-bucket')).toEqual({ bucket: 'my-bucket', key: '' });
    expect(() => parseS3Url('/local/dir')).toThrow(/is not an s3:\/\/ URL; write s3:\/\/BUCKET\/PREFIX/);
    expect(() => parseS3Url('s3://Bad_Bucket/x')).toThrow(/not a valid bucket name/);
  });
});

describe('store options', () => {
  it('a misspelt key names the nearest one; a wrong type names the option, never a credential’s value', () => {
    expect(() => checkS3StoreOptions({ endpont: 'http://x' })).toThrow(/^s3 store options: unknown option "endpont"; did you mean "endpoint"\?/);
    expect(() => checkS3StoreOptions({ endpoint: 'localhost:7480' })).toThrow(/endpoint must be an http:\/\/ or https:\/\/ URL such as "http:\/\/127\.0\.0\.1:7480", got "localhost:7480"/);
    expect(() => checkS3StoreOptions({ retry: { maxAttempt: 3 } })).toThrow(/retry: unknown option "maxAttempt"; did you mean "maxAttempts"\?/);
    let err: unknown;
    try {
      checkS3StoreOptions({ credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: '' } });
    } catch (e) {
      err = e;
    }
    expect(String((err as Error).message)).toBe('s3 store options: credentials.secretAccessKey must be a non-empty string, got an empty string.');
    expect(String((err as Error).message)).not.toContain('AKIDEXAMPLE');
  });

  it('credentials the SDK has seen are accepted (it adds $source to objects it was given)', () => {
    const credentials = { accessKeyId: 'a', secretAccessKey: 'b', $source: {}, expiration: new Date() };
    expect(() => s3StoreFactory({ credentials })).not.toThrow();
  });
});

describe.skipIf(!haveRgw)('configuration from the standard AWS configuration, against a real RADOS Gateway', () => {
  const gw = useGateway();
  const saved = Object.fromEntries(AWS_VARS.map((k) => [k, process.env[k]]));
  const dirs: string[] = [];
  afterEach(() => {
    for (const k of AWS_VARS) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  const roundTrip = async (s3: S3Primitives) => {
    const url = `${freshPrefix(gw.get())}/cfg`;
    await s3.check(url);
    const { bucket, key } = s3.locate(url);
    await s3.objects.put(bucket, key, 'ok');
    expect((await s3.objects.get(bucket, key))?.body.toString()).toBe('ok');
    s3.destroy();
  };

  it('environment: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION and AWS_ENDPOINT_URL (path-style by default with an endpoint)', async () => {
    Object.assign(process.env, gw.get().env);
    await roundTrip(new S3Primitives({ cacheDir: false }));
  });

  it('shared config and credentials files with a named profile (endpoint_url in the profile)', async () => {
    const rgw = gw.get();
    const dir = mkdtempSync(join(tmpdir(), 'cairn-aws-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'config'), `[profile cairn-test]\nregion = us-east-1\nendpoint_url = ${rgw.endpoint}\n\n[default]\nregion = eu-west-3\n`);
    writeFileSync(join(dir, 'credentials'), `[cairn-test]\naws_access_key_id = ${rgw.accessKeyId}\naws_secret_access_key = ${rgw.secretAccessKey}\n\n[default]\naws_access_key_id = WRONGWRONGWRONG\naws_secret_access_key = wrong\n`);
    for (const k of AWS_VARS) delete process.env[k];
    process.env.AWS_CONFIG_FILE = join(dir, 'config');
    process.env.AWS_SHARED_CREDENTIALS_FILE = join(dir, 'credentials');
    // AWS_PROFILE selects the profile for everything, its endpoint_url included (path-style
    // must then be asked for: the store only defaults to it for an endpoint it is given).
    process.env.AWS_PROFILE = 'cairn-test';
    await roundTrip(new S3Primitives({ forcePathStyle: true, cacheDir: false }));
    // The `profile` option selects credentials and region (the default profile's keys are wrong),
    // but the SDK reads endpoint_url only from AWS_PROFILE's profile: give the endpoint with it.
    delete process.env.AWS_PROFILE;
    await roundTrip(new S3Primitives({ profile: 'cairn-test', endpoint: rgw.endpoint, cacheDir: false }));
  });

  it('the options object (what Cairn’s config file passes) wins over the environment', async () => {
    const rgw = gw.get();
    process.env.AWS_ACCESS_KEY_ID = 'WRONGWRONGWRONG';
    process.env.AWS_SECRET_ACCESS_KEY = 'wrong';
    process.env.AWS_ENDPOINT_URL = 'http://127.0.0.1:9';
    await roundTrip(new S3Primitives({ endpoint: rgw.endpoint, region: 'any-region', credentials: { accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey }, cacheDir: false }));
  });
});
