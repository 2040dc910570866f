/**
 * What the provider can do, found out once before anything runs: conditional writes
 * (`If-None-Match: *` and `If-Match` on PUT) make leases safe; a conditional DELETE makes a
 * release one request instead of a check and a delete. Costs five or six requests on a
 * scratch key under `{prefix}/.cairn/probe/`, which is deleted again.
 */
import { randomBytes } from 'node:crypto';
import type { S3Objects } from './objects.js';

/** What the provider honours (capabilities as data). */
export interface ProviderCapabilities {
  /** `If-None-Match: *` and `If-Match` on PUT are enforced (412 when they fail). */
  readonly conditionalWrites: boolean;
  /** `If-Match` on DELETE is enforced (AWS S3 yes; Ceph RGW 16 ignores it and deletes). */
  readonly conditionalDelete: boolean;
  /** What failed, when `conditionalWrites` is false. */
  readonly missing?: string;
}

/** Probes the provider on a scratch key under `keyPrefix` (a directory key, `''` or ending in `/`). */
export async function probeProvider(objects: S3Objects, bucket: string, keyPrefix: string): Promise<ProviderCapabilities> {
  const key = `${keyPrefix}.cairn/probe/${Date.now().toString(36)}-${randomBytes(6).toString('hex')}`;
  try {
    const first = await objects.createIfAbsent(bucket, key, 'probe-1');
    if (first === null) return { conditionalWrites: false, conditionalDelete: false, missing: 'a create-if-absent of a fresh key was refused' };
    if ((await objects.createIfAbsent(bucket, key, 'probe-2')) !== null) {
      return { conditionalWrites: false, conditionalDelete: false, missing: 'If-None-Match: * was ignored (a second create overwrote the first)' };
    }
    if ((await objects.replaceIfMatch(bucket, key, 'probe-3', '0123456789abcdef0123456789abcdef')) !== null) {
      return { conditionalWrites: false, conditionalDelete: false, missing: 'If-Match with a wrong ETag was ignored' };
    }
    if ((await objects.replaceIfMatch(bucket, key, 'probe-4', first)) === null) {
      return { conditionalWrites: false, conditionalDelete: false, missing: 'If-Match with the current ETag was refused' };
    }
    const deleted = await objects.deleteIfMatch(bucket, key, '0123456789abcdef0123456789abcdef');
    const conditionalDelete = !deleted && (await objects.head(bucket, key)) !== null;
    return { conditionalWrites: true, conditionalDelete };
  } finally {
    await objects.delete(bucket, key).catch(() => undefined);
  }
}
