/**
 * Object primitives over one S3 client: whole-object put/get/head/delete, conditional writes
 * (create-if-absent, replace-if-ETag, delete-if-ETag) and one LIST page. Every ETag in and out
 * is unquoted. Failures are `CAIRN_STORE` errors naming the `s3://` URL (see errors.ts); a
 * missing object is `null`, a failed condition is `null`/`false`, never an error.
 *
 * A conditional write whose response was lost (a reset after the server applied it) is retried
 * by the SDK and then fails its own condition (412). When a 412 follows a retry, the object is
 * read back: if it holds exactly the bytes we sent, the write was ours and counts as done.
 */
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import type { CairnError } from '@cairn/core';
import { attemptsOf, type Scrubber, statusOf, storeError } from './errors.js';
import { unquote } from './etag.js';
import { s3Url } from './url.js';

/** What a HEAD (or a LIST entry) says about an object. */
export interface ObjectHead {
  /** Unquoted ETag. */
  readonly etag: string;
  /** Size in bytes. */
  readonly size: number;
  /** Last modification, epoch ms (second precision on most providers). */
  readonly lastModified: number;
}

/** An object read whole. */
export interface GotObject extends ObjectHead {
  /** The object's bytes. */
  readonly body: Buffer;
  /**
   * The gateway's clock when it answered (its `Date` header, epoch ms, second precision), when
   * it sent one: `serverDate - lastModified` is the object's age on the gateway's own clock,
   * whatever this host's clock says.
   */
  readonly serverDate?: number;
}

/** One LIST page. */
export interface ListPage {
  /** Objects, in key order. */
  readonly objects: readonly (ObjectHead & { readonly key: string })[];
  /** Common prefixes (with a delimiter). */
  readonly prefixes: readonly string[];
  /** More keys follow. */
  readonly truncated: boolean;
  /** Continuation token of the next page. */
  readonly next: string | undefined;
}

/** Arguments of {@link S3Objects.list}. */
export interface ListArgs {
  /** Only keys starting with this. */
  readonly prefix?: string;
  /** Only keys after this one (first page only). */
  readonly startAfter?: string;
  /** Group keys by this delimiter into common prefixes. */
  readonly delimiter?: string;
  /** Keys per page (at most 1,000). @default 1000 */
  readonly maxKeys?: number;
  /** Continues a listing. */
  readonly continuationToken?: string;
}

type Body = string | Uint8Array;

function bytesOf(body: Body): Buffer {
  return typeof body === 'string' ? Buffer.from(body) : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
}

/** Whole-object and conditional operations on one S3 client. */
export class S3Objects {
  /** The configured client (also for direct writes by steps). */
  readonly client: S3Client;
  readonly #scrubber: Scrubber;

  /** The `Date` header of each response, by its output's `$metadata` (kept by the middlewares that copy the output). */
  readonly #dates = new WeakMap<object, number>();

  constructor(client: S3Client, scrubber: Scrubber) {
    this.client = client;
    this.#scrubber = scrubber;
    const dates = this.#dates;
    client.middlewareStack.add(
      (next) => async (args) => {
        const out = await next(args);
        const date = (out.response as { headers?: Record<string, string | undefined> } | undefined)?.headers?.date;
        const ms = date === undefined ? Number.NaN : Date.parse(date);
        const meta = (out.output as { $metadata?: object } | undefined)?.$metadata;
        if (Number.isFinite(ms) && typeof meta === 'object' && meta !== null) dates.set(meta, ms);
        return out;
      },
      { step: 'initialize', name: 'cairnServerDate', priority: 'high' },
    );
  }

  /** A `CAIRN_STORE` error for a failed request on `bucket/key`, with no credential in it. */
  error(what: string, bucket: string, key: string, err: unknown, fix?: string): CairnError {
    return storeError(what, s3Url({ bucket, key }), err, this.#scrubber, fix);
  }

  #fail(what: string, bucket: string, key: string, err: unknown): never {
    throw this.error(what, bucket, key, err);
  }

  /** Writes a whole object; resolves with its ETag. */
  async put(bucket: string, key: string, body: Body, contentType = 'application/octet-stream'): Promise<string> {
    try {
      const out = await this.client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: contentType }));
      return unquote(out.ETag);
    } catch (err) {
      return this.#fail('write', bucket, key, err);
    }
  }

  /** Reads a whole object; null when it does not exist. */
  async get(bucket: string, key: string): Promise<GotObject | null> {
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      const body = Buffer.from((await out.Body?.transformToByteArray()) ?? new Uint8Array());
      const serverDate = this.#dates.get(out.$metadata);
      return { body, etag: unquote(out.ETag), size: out.ContentLength ?? body.length, lastModified: out.LastModified?.getTime() ?? 0, ...(serverDate !== undefined ? { serverDate } : {}) };
    } catch (err) {
      if (statusOf(err) === 404) return null;
      return this.#fail('read', bucket, key, err);
    }
  }

  /**
   * Reads an object's metadata; null when it does not exist, or (with `ifMatch`) when its ETag
   * is no longer `ifMatch` — the fence check: one request, nothing transferred.
   */
  async head(bucket: string, key: string, ifMatch?: string): Promise<ObjectHead | null> {
    try {
      const out = await this.client.send(new HeadObjectCommand({ Bucket: bucket, Key: key, ...(ifMatch !== undefined ? { IfMatch: ifMatch } : {}) }));
      return { etag: unquote(out.ETag), size: out.ContentLength ?? 0, lastModified: out.LastModified?.getTime() ?? 0 };
    } catch (err) {
      const s = statusOf(err);
      if (s === 404 || (s === 412 && ifMatch !== undefined)) return null;
      return this.#fail('read', bucket, key, err);
    }
  }

  /** Deletes an object (no error when it is absent). */
  async delete(bucket: string, key: string): Promise<void> {
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
    } catch (err) {
      if (statusOf(err) === 404) return;
      this.#fail('delete', bucket, key, err);
    }
  }

  /** Creates the object only if no object has that key (`If-None-Match: *`); its ETag, or null when one exists. */
  async createIfAbsent(bucket: string, key: string, body: Body): Promise<string | null> {
    try {
      const out = await this.client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, IfNoneMatch: '*' }));
      return unquote(out.ETag);
    } catch (err) {
      if (statusOf(err) === 412 || statusOf(err) === 409) return this.#ourWriteAfterRetry(bucket, key, body, err);
      return this.#fail('create', bucket, key, err);
    }
  }

  /** Replaces the object only if its ETag is still `etag` (`If-Match`, unquoted); the new ETag, or null when it changed or is gone. */
  async replaceIfMatch(bucket: string, key: string, body: Body, etag: string): Promise<string | null> {
    try {
      const out = await this.client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, IfMatch: unquote(etag) }));
      return unquote(out.ETag);
    } catch (err) {
      const s = statusOf(err);
      if (s === 412 || s === 409 || s === 404) return this.#ourWriteAfterRetry(bucket, key, body, err);
      return this.#fail('replace', bucket, key, err);
    }
  }

  /**
   * Deletes the object only if its ETag is still `etag` (`If-Match` on DELETE); false when it
   * changed. Only where the provider honours the condition (see probe.ts): Ceph RGW 16 ignores
   * it and deletes anyway.
   */
  async deleteIfMatch(bucket: string, key: string, etag: string): Promise<boolean> {
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key, IfMatch: unquote(etag) }));
      return true;
    } catch (err) {
      const s = statusOf(err);
      if (s === 404) return attemptsOf(err) > 1;
      if (s === 412) return attemptsOf(err) > 1 && (await this.head(bucket, key)) === null;
      return this.#fail('delete', bucket, key, err);
    }
  }

  /** One LIST page (`ListObjectsV2`). */
  async list(bucket: string, args: ListArgs): Promise<ListPage> {
    try {
      const out = await this.client.send(
        new ListObjectsV2Command({
          Bucket: bucket,
          MaxKeys: args.maxKeys ?? 1000,
          ...(args.prefix ? { Prefix: args.prefix } : {}),
          ...(args.startAfter && !args.continuationToken ? { StartAfter: args.startAfter } : {}),
          ...(args.delimiter ? { Delimiter: args.delimiter } : {}),
          ...(args.continuationToken ? { ContinuationToken: args.continuationToken } : {}),
        }),
      );
      return {
        objects: (out.Contents ?? []).map((o) => ({ key: o.Key ?? '', etag: unquote(o.ETag), size: o.Size ?? 0, lastModified: o.LastModified?.getTime() ?? 0 })),
        prefixes: (out.CommonPrefixes ?? []).map((p) => p.Prefix ?? ''),
        truncated: out.IsTruncated === true,
        next: out.NextContinuationToken,
      };
    } catch (err) {
      return this.#fail('list', bucket, args.prefix ?? '', err);
    }
  }

  /** After a 412 that followed a retry: was the first attempt ours? (Its ETag, or null.) */
  async #ourWriteAfterRetry(bucket: string, key: string, body: Body, err: unknown): Promise<string | null> {
    if (attemptsOf(err) <= 1) return null;
    const now = await this.get(bucket, key);
    return now !== null && now.body.equals(bytesOf(body)) ? now.etag : null;
  }
}
