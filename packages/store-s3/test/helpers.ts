/**
 * Tests run against a real Ceph RADOS Gateway on loopback (tools/testenv/rgw.ts), one per test
 * file; each test uses its own prefix.
 */
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';
import { rgwOrSkip, startRgw, type RgwInstance } from '../../../tools/testenv/rgw.js';
import { S3Primitives, type S3PrimitivesOptions } from '../src/index.js';

// The SDK's notice that its 2027 releases need Node 22 (this package pins one that runs on 20).
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
// Never let the default credential chain ask an instance-metadata address (not loopback).
process.env.AWS_EC2_METADATA_DISABLED = 'true';

/** True when Ceph is installed (outside CI the file skips otherwise). */
export const haveRgw = rgwOrSkip('@cairn/store-s3 tests');

/** Starts one gateway for the file; `get()` returns it inside tests. */
export function useGateway(): { get(): RgwInstance } {
  let rgw: RgwInstance | undefined;
  beforeAll(async () => {
    if (haveRgw) rgw = await startRgw();
  }, 120_000);
  afterAll(async () => {
    await rgw?.stop();
  });
  return {
    get() {
      if (!rgw) throw new Error('the gateway did not start');
      return rgw;
    },
  };
}

/** Client options for the gateway. */
export function clientOptions(rgw: RgwInstance, extra: S3PrimitivesOptions = {}): S3PrimitivesOptions {
  return { endpoint: rgw.endpoint, region: rgw.region, credentials: { accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey }, cacheDir: false, ...extra };
}

/** Primitives on the gateway. */
export function primitives(rgw: RgwInstance, extra: S3PrimitivesOptions = {}): S3Primitives {
  return new S3Primitives(clientOptions(rgw, extra));
}

/** A fresh `s3://bucket/tN-xxxx` prefix. */
export function freshPrefix(rgw: RgwInstance, tag = 't'): string {
  return `s3://${rgw.bucket}/${tag}-${randomBytes(4).toString('hex')}`;
}

/** The key of the committed output file `file` of the step at `url` (under the attempt prefix its record names). */
export async function committedKey(s3: S3Primitives, url: string, file: string): Promise<string> {
  const { prefix } = await s3.committedObjects(url);
  return `${s3.locate(url).key}/${prefix ?? ''}${file}`;
}

/**
 * A user's project in `dir` for the CLI against the gateway: `@cairn/core`, `runner` and
 * `store-s3` installed (linked from this repository), the CLI's fixture pipeline, and a
 * `cairn.config.mjs` naming the S3 store plugin at `prefix`. `options`: more S3 store options.
 */
export function writeS3Project(dir: string, rgw: RgwInstance, prefix: string, options: Record<string, unknown> = {}): void {
  const repo = fileURLToPath(new URL('../../../', import.meta.url));
  mkdirSync(join(dir, 'node_modules', '@cairn'), { recursive: true });
  for (const p of ['core', 'runner', 'store-s3']) symlinkSync(join(repo, 'packages', p), join(dir, 'node_modules', '@cairn', p));
  copyFileSync(join(import.meta.dirname, 'fixtures', 'cli-pipeline.mjs'), join(dir, 'pipeline.mjs'));
  writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n');
  const store = { endpoint: rgw.endpoint, region: 'us-east-1', cacheDir: join(dir, 'cache'), ...options };
  writeFileSync(join(dir, 'cairn.config.mjs'), `import { s3StoreFactory } from '@cairn/store-s3';\nexport default {\n  prefix: ${JSON.stringify(prefix)},\n  stores: { s3: { use: s3StoreFactory, options: ${JSON.stringify(store)} } },\n};\n`);
}
