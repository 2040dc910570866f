/** ETags as this package keeps them: unquoted. */
import { createHash } from 'node:crypto';

/**
 * `etag` without its surrounding quotes (and a weak `W/` prefix). Ceph RGW 16 refuses
 * `If-Match` with the quoted form that HeadObject returns (412), so conditions always send this.
 */
export function unquote(etag: string | undefined): string {
  if (etag === undefined) return '';
  let e = etag.trim();
  if (e.startsWith('W/')) e = e.slice(2);
  if (e.length >= 2 && e.startsWith('"') && e.endsWith('"')) e = e.slice(1, -1);
  return e;
}

/** MD5 hex of `body`: the ETag an S3 provider gives an object written in one unencrypted PUT. */
export function md5Hex(body: string | Uint8Array): string {
  return createHash('md5').update(body).digest('hex');
}
