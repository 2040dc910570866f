/** `s3://bucket/key` locations. */
import { CairnError } from '@cairn/core';

/** A bucket and a key (or key prefix, without a leading slash). */
export interface S3Location {
  /** Bucket name. */
  readonly bucket: string;
  /** Object key or key prefix; `''` for the bucket's root. */
  readonly key: string;
}

const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** Parses `s3://bucket/key…`; throws `CAIRN_CONFIG` naming the URL and the expected form. */
export function parseS3Url(url: string): S3Location {
  const m = /^s3:\/\/([^/]+)\/?(.*)$/.exec(url);
  if (!m) throw new CairnError('CAIRN_CONFIG', `${url} is not an s3:// URL; write s3://BUCKET/PREFIX.`);
  const bucket = m[1] as string;
  if (!BUCKET.test(bucket)) throw new CairnError('CAIRN_CONFIG', `${url}: "${bucket}" is not a valid bucket name (3–63 lower-case letters, digits, dots and hyphens).`);
  let key = m[2] as string;
  while (key.startsWith('/')) key = key.slice(1);
  return { bucket, key };
}

/** `s3://bucket/key`. */
export function s3Url(loc: S3Location): string {
  return `s3://${loc.bucket}/${loc.key}`;
}

/** `key` as a directory prefix: with exactly one trailing `/` (`''` stays `''`). */
export function dirKey(key: string): string {
  let k = key;
  while (k.endsWith('/')) k = k.slice(0, -1);
  return k === '' ? '' : `${k}/`;
}
