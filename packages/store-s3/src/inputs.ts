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
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { CairnError } from '@cairn/core';
import { LEASE_FILE, RECORD_FILE, STATUS_FILE } from './layout.js';
import { md5Hex } from './etag.js';
import type { S3Objects } from './objects.js';
import { s3Url } from './url.js';

const METADATA = new Set([STATUS_FILE, RECORD_FILE, LEASE_FILE]);
/** A lock directory older than this belongs to a process that died mid-download. */
const LOCK_STALE_MS = 10 * 60_000;

/** Downloads every output object under `keyPrefix` (a directory key) into `localDir`; the number of files. */
export async function downloadPrefix(objects: S3Objects, bucket: string, keyPrefix: string, localDir: string): Promise<number> {
  let token: string | undefined;
  let n = 0;
  do {
    const page = await objects.list(bucket, { prefix: keyPrefix, continuationToken: token });
    for (const o of page.objects) {
      const rel = o.key.slice(keyPrefix.length);
      if (rel === '' || rel.endsWith('/') || METADATA.has(rel) || rel.startsWith('.cairn/')) continue;
      const file = join(localDir, ...rel.split('/'));
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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The host-wide cache of downloaded dependency outputs. */
export class InputCache {
  readonly #objects: S3Objects;
  readonly #root: string;
  readonly #inFlight = new Map<string, Promise<string>>();
  #downloads = 0;

  /** `root`: the cache directory (shared by every process on this host). */
  constructor(objects: S3Objects, root: string) {
    this.#objects = objects;
    this.#root = root;
  }

  /** Downloads this process started (tests, benchmarks). */
  get downloads(): number {
    return this.#downloads;
  }

  /**
   * A local directory holding the outputs under `dir` (a directory key) as of the record ETag
   * `identity`; downloaded at most once per host.
   */
  localDir(bucket: string, dir: string, identity: string): Promise<string> {
    const id = createHash('sha256').update(`${bucket}\n${dir}\n${identity}`).digest('hex').slice(0, 32);
    const target = join(this.#root, id);
    let p = this.#inFlight.get(target);
    if (!p) {
      p = this.#fetch(bucket, dir, target).finally(() => this.#inFlight.delete(target));
      this.#inFlight.set(target, p);
    }
    return p;
  }

  async #fetch(bucket: string, dir: string, target: string): Promise<string> {
    await mkdir(this.#root, { recursive: true });
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
        await downloadPrefix(this.#objects, bucket, dir, tmp);
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
