/**
 * Tests run against a real Ceph RADOS Gateway on loopback (tools/testenv/rgw.ts), one per test
 * file; each test uses its own prefix.
 */
import { randomBytes } from 'node:crypto';
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
