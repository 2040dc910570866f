/**
 * Dependency outputs fetched to local directories on demand, cached on this host by identity:
 * the output's key prefix and the ETag of its record (a step's record is rewritten by every
 * commit, so a rebuilt output has a new identity). Each identity is downloaded once per host:
 * callers in this process share one download, other processes wait on a lock directory, and a
 * finished download is renamed into place atomically. Metadata objects (status, record, lease,
 * `.cairn/`) are not downloaded.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { CairnError } from '@cairn/core';
import { LEASE_FILE, RECORD_FILE, STATUS_FILE } from './layout.js';
import { md5Hex } from './etag.js';
import type { S3Objects } from './objects.js';
import { ensurePrivateDir } from './private-dir.js';
import { s3Url } from './url.js';

const METADATA = new Set([STATUS_FILE, RECORD_FILE, LEASE_FILE]);
/** A lock directory older than this belongs to a process that died mid-download. */
const LOCK_STALE_MS = 10 * 60_000;

/**
 * The local file for the object `key` (`rel` below the downloaded prefix) inside `localDir`.
 * Object keys are any bytes: a key with a `..`, `.` or empty segment, or a NUL, could name a file
 * outside the directory (`dep/../../../../home/u/.bashrc`), so it is refused, naming the key.
 */
export function localFileOf(localDir: string, rel: string, bucket: string, key: string): string {
  const segs = rel.split('/');
  const root = resolve(localDir);
  const file = resolve(root, ...segs);
  if (segs.some((s) => s === '' || s === '.' || s === '..' || s.includes('\0')) || !file.startsWith(root + sep)) {
    throw new CairnError(
      'CAIRN_INVALID_PATH',
      `Refusing to download ${s3Url({ bucket, key })}: its key ${JSON.stringify(key)} has a "..", "." or empty segment, so its file would not stay inside ${localDir}. Nothing was written outside it; remove or rename that object in the bucket.`,
    );
  }
  return file;
}

/**
 * Downloads every output object under `keyPrefix` (a directory key) into `localDir`; the number
 * of files. `skip(rel)`: objects under the prefix that are not outputs (the step's metadata, other
 * attempts' objects).
 */
export async function downloadPrefix(objects: S3Objects, bucket: string, keyPrefix: string, localDir: string, skip: (rel: string) => boolean = isMetadata): Promise<number> {
  let token: string | undefined;
  let n = 0;
  do {
    const page = await objects.list(bucket, { prefix: keyPrefix, continuationToken: token });
    for (const o of page.objects) {
      const rel = o.key.slice(keyPrefix.length);
      if (rel === '' || rel.endsWith('/') || skip(rel)) continue;
      const file = localFileOf(localDir, rel, bucket, o.key);
      await mkdir(dirname(file), { recursive: true });
      try {
        const out = await objects.client.send(new GetObjectCommand({ Bucket: bucket, Key: o.key }));
        await pipeline(out.Body as Readable, createWriteStream(file));
      } catch (err) {
        throw objects.error('download', bucket, o.key, err);
      }
      const size = (await stat(file)).size;
      if (size !== o.size) throw new CairnError('CAIRN_STORE', `Downloaded ${s3Url({ bucket, key: o.key })} has ${size} bytes, the listing says ${o.size}; retry.`, { retryable: true });
      n++;
    }
    token = page.truncated ? page.next : undefined;
  } while (token !== undefined);
  return n;
}

/** A step's metadata (status, record, lease, `.cairn/`) or an attempt's objects (`@…/`, see attempts.ts): never outputs of a step directory. */
export function isMetadata(rel: string): boolean {
  return METADATA.has(rel) || rel.startsWith('.cairn/') || rel.startsWith('@');
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The host-wide cache of downloaded dependency outputs. */
export class InputCache {
  readonly #objects: S3Objects;
  readonly #root: string;
  readonly #privateBase: string | undefined;
  readonly #inFlight = new Map<string, Promise<string>>();
  #downloads = 0;

  /**
   * `root`: the cache directory (shared by every process of this user on this host).
   * `privateBase`: a directory above it in a shared place (the OS temp dir) that must be this
   * user's own (created 0700, checked before each download).
   */
  constructor(objects: S3Objects, root: string, privateBase?: string) {
    this.#objects = objects;
    this.#root = root;
    this.#privateBase = privateBase;
  }

  /** Downloads this process started (tests, benchmarks). */
  get downloads(): number {
    return this.#downloads;
  }

  /**
   * A local directory holding the outputs under `dir` (a directory key) as of the record ETag
   * `identity`; downloaded at most once per host.
   */
  localDir(bucket: string, dir: string, identity: string, skip?: (rel: string) => boolean): Promise<string> {
    const id = createHash('sha256').update(`${bucket}\n${dir}\n${identity}`).digest('hex').slice(0, 32);
    const target = join(this.#root, id);
    let p = this.#inFlight.get(target);
    if (!p) {
      p = this.#fetch(bucket, dir, target, skip).finally(() => this.#inFlight.delete(target));
      this.#inFlight.set(target, p);
    }
    return p;
  }

  async #fetch(bucket: string, dir: string, target: string, skip?: (rel: string) => boolean): Promise<string> {
    if (this.#privateBase !== undefined) await ensurePrivateDir(this.#privateBase, 'the input cache directory');
    await mkdir(this.#root, { recursive: true, mode: 0o700 });
    const lock = `${target}.lock`;
    for (;;) {
      if (await exists(target)) return target;
      try {
        await mkdir(lock);
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        const age = await stat(lock).then((s) => Date.now() - s.mtimeMs, () => 0);
        if (age > LOCK_STALE_MS) await rm(lock, { recursive: true, force: true });
        else await sleep(100);
      }
    }
    try {
      if (await exists(target)) return target;
      const tmp = `${target}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
      try {
        await downloadPrefix(this.#objects, bucket, dir, tmp, skip);
        await mkdir(tmp, { recursive: true }); // an output with no files is an empty directory
        await rename(tmp, target);
        this.#downloads++;
      } finally {
        await rm(tmp, { recursive: true, force: true });
      }
      return target;
    } finally {
      await rm(lock, { recursive: true, force: true });
    }
  }
}

async function exists(p: string): Promise<boolean> {
  return stat(p).then(
    () => true,
    () => false,
  );
}

/** A short, stable name for a cache directory of one endpoint (no credentials in it). */
export function cacheNamespace(endpoint: string | undefined): string {
  return md5Hex(endpoint ?? 'aws').slice(0, 12);
}
