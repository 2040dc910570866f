/**
 * Uploading a step's local output directory: every file is hashed while it is read (size,
 * SHA-256, MD5 of the whole and of each part), uploaded (multipart above `partSize`, through
 * `@aws-sdk/lib-storage`), and then checked against what the provider holds (HEAD: the size,
 * and the ETag, which is the MD5 of a one-part object or the MD5 of the parts' MD5s followed by
 * `-N`). Any mismatch throws before the caller commits anything.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { Upload } from '@aws-sdk/lib-storage';
import { CairnError } from '@cairn/core';
import type { S3Objects } from './objects.js';
import { s3Url } from './url.js';

/** One uploaded, verified file. */
export interface UploadedFile {
  /** Path relative to the uploaded directory, `/`-separated. */
  readonly path: string;
  /** Its object key. */
  readonly key: string;
  /** Size in bytes. */
  readonly size: number;
  /** SHA-256 hex of the bytes. */
  readonly sha256: string;
  /** The provider's (unquoted) ETag. */
  readonly etag: string;
  /** How the provider's copy was checked: size and MD5 ETag, or the size alone (an ETag that is not an MD5, e.g. SSE-KMS). */
  readonly verified: 'size+md5' | 'size';
}

/** Options of {@link uploadDirectory}. */
export interface UploadOptions {
  /** Part size of multipart uploads (at least 5 MiB). @default 8 MiB */
  readonly partSize?: number;
  /** Parts of one file in flight. @default 4 */
  readonly queueSize?: number;
  /** Files in flight. @default 4 */
  readonly files?: number;
}

interface Digest {
  readonly size: number;
  readonly sha256: string;
  /** The ETag an MD5-ETag provider gives this file uploaded with `partSize` parts. */
  readonly expectedEtag: string;
}

/** Hashes a file as `partSize` parts would cut it. */
async function digest(file: string, partSize: number): Promise<Digest> {
  const sha = createHash('sha256');
  const whole = createHash('md5');
  const parts: Buffer[] = [];
  let part = createHash('md5');
  let inPart = 0;
  let size = 0;
  for await (const chunk of createReadStream(file, { highWaterMark: 1024 * 1024 }) as AsyncIterable<Buffer>) {
    sha.update(chunk);
    whole.update(chunk);
    size += chunk.length;
    let off = 0;
    while (off < chunk.length) {
      const take = Math.min(partSize - inPart, chunk.length - off);
      part.update(chunk.subarray(off, off + take));
      inPart += take;
      off += take;
      if (inPart === partSize) {
        parts.push(part.digest());
        part = createHash('md5');
        inPart = 0;
      }
    }
  }
  if (inPart > 0) parts.push(part.digest());
  // lib-storage sends a file of at most one part as one PutObject (ETag = MD5 of the whole).
  const expectedEtag = parts.length <= 1 ? whole.digest('hex') : `${createHash('md5').update(Buffer.concat(parts)).digest('hex')}-${parts.length}`;
  return { size, sha256: sha.digest('hex'), expectedEtag };
}

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string) => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.isFile()) out.push(p);
    }
  };
  await walk(dir);
  return out.sort();
}

const MD5_ETAG = /^[0-9a-f]{32}(-\d+)?$/;

/**
 * Uploads every file under `localDir` to `keyPrefix` (a directory key) and verifies each.
 * `keyFor(path)`: the key of the file at `path` (relative, `/`-separated) when it is not
 * `keyPrefix + path`.
 */
export async function uploadDirectory(objects: S3Objects, localDir: string, bucket: string, keyPrefix: string, options: UploadOptions = {}, keyFor?: (path: string) => string): Promise<UploadedFile[]> {
  const partSize = Math.max(options.partSize ?? 8 * 1024 * 1024, 5 * 1024 * 1024);
  const files = await filesUnder(localDir);
  const key = keyFor ?? ((path: string) => keyPrefix + path);
  const out = new Array<UploadedFile>(files.length);
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (next < files.length && !failed) {
      const i = next++;
      try {
        out[i] = await uploadFile(objects, files[i] as string, localDir, bucket, key, partSize, options.queueSize ?? 4);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  // On a failure the other workers finish the file in hand and stop: when this rejects, no upload
  // is still in flight (a caller that then deletes what was uploaded deletes it all).
  const settled = await Promise.allSettled(Array.from({ length: Math.min(options.files ?? 4, files.length) }, worker));
  const rejected = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (rejected !== undefined) throw rejected.reason;
  return out;
}

async function uploadFile(objects: S3Objects, file: string, root: string, bucket: string, keyFor: (path: string) => string, partSize: number, queueSize: number): Promise<UploadedFile> {
  const path = relative(root, file).split(sep).join('/');
  const key = keyFor(path);
  const url = s3Url({ bucket, key });
  const before = await stat(file);
  const d = await digest(file, partSize);
  if (d.size !== before.size) throw new CairnError('CAIRN_STORE', `The output file ${file} changed while it was being uploaded to ${url}; nothing was committed. Do not write outputs after the step returns.`);
  const upload = new Upload({ client: objects.client, params: { Bucket: bucket, Key: key, Body: createReadStream(file) }, partSize, queueSize, leavePartsOnError: false });
  try {
    await upload.done();
  } catch (err) {
    throw objects.error('upload', bucket, key, err, `Uploading ${file} failed; nothing was committed and the step can be retried.`);
  }
  const head = await objects.head(bucket, key);
  if (head === null || head.size !== d.size) {
    throw new CairnError('CAIRN_STORE', `Uploaded ${url} holds ${head === null ? 'nothing' : `${head.size} bytes`}, but ${file} has ${d.size}; nothing was committed. Retry the step.`, { retryable: true });
  }
  const md5Shaped = MD5_ETAG.test(head.etag);
  if (md5Shaped && head.etag !== d.expectedEtag) {
    throw new CairnError('CAIRN_STORE', `Uploaded ${url} has ETag ${head.etag}, but ${file} should give ${d.expectedEtag} (corrupted in transit?); nothing was committed. Retry the step.`, { retryable: true });
  }
  return { path, key, size: d.size, sha256: d.sha256, etag: head.etag, verified: md5Shaped ? 'size+md5' : 'size' };
}
