/**
 * The object-store side of Cairn's S3 store, wired once: a configured client with its request
 * counter and retries, the object primitives, leases, batched state reads, output uploads and
 * the host's input cache. A `Store` implementation (store.ts) is a thin layer over this.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import { CairnError } from '@cairn/core';
import { RECORD_FILE, STATUS_FILE } from './layout.js';
import { createClient, describeTarget, learnCredentials, type S3ClientOptions, type S3Logger } from './config.js';
import { checkReadable, checkStore } from './connect.js';
import { RequestCounter } from './counter.js';
import { Scrubber } from './errors.js';
import { attemptPrefix, objectsOf } from './attempts.js';
import { cacheNamespace, InputCache, isMetadata } from './inputs.js';
import { defaultPrivateRoot } from './private-dir.js';
import { S3Leases } from './leases.js';
import { StepLister } from './listing.js';
import { S3Objects } from './objects.js';
import { uploadDirectory, type UploadedFile, type UploadOptions } from './outputs.js';
import type { ProviderCapabilities } from './probe.js';
import { StateReader, type StepDir } from './states.js';
import { TextCache } from './text-cache.js';
import { dirKey, parseS3Url, type S3Location, s3Url } from './url.js';

/** Options of {@link S3Primitives}: the client's, plus how the store behaves. */
export interface S3PrimitivesOptions extends S3ClientOptions {
  /**
   * Run on a provider that does not enforce conditional writes, with leases that are NOT safe
   * (two runners may build one step at once). Logged as a warning at every start. @default false
   */
  readonly unsafeNoLeases?: boolean;
  /** This host's cache (records by ETag, downloaded inputs); false: records in memory only, inputs under the OS temp dir. @default `$XDG_CACHE_HOME/cairn/s3` or `~/.cache/cairn/s3` */
  readonly cacheDir?: string | false;
  /** Where warnings go. @default stderr, prefixed `[cairn s3]` */
  readonly logger?: S3Logger;
  /** Counts requests (several stores may share one). @default a fresh counter */
  readonly counter?: RequestCounter;
}

/** Before the probe ran: conditional writes are assumed (the safe path), conditional DELETE is not. */
const UNPROBED: ProviderCapabilities = { conditionalWrites: true, conditionalDelete: false };

const defaultLogger: S3Logger = { warn: (m) => console.warn(`[cairn s3] ${m}`) };

/** A step directory of an `s3://` output path. */
export function stepDir(path: string): StepDir {
  const loc = parseS3Url(path);
  return { bucket: loc.bucket, dir: dirKey(loc.key) };
}

/** Everything the S3 store is built from. */
export class S3Primitives {
  /** The configured client: for steps that write their outputs directly. */
  readonly client: S3Client;
  /** Requests sent, per operation. */
  readonly counter: RequestCounter;
  /** Whole-object and conditional operations. */
  readonly objects: S3Objects;
  /** Leases with conditional writes. */
  readonly leases: S3Leases;
  /** Batched state reads. */
  readonly states: StateReader;
  /** Downloaded dependency outputs of this host. */
  readonly inputs: InputCache;
  /** Where requests go (no secret in it). */
  readonly target: string;
  /** The options these primitives were built from. */
  readonly options: S3PrimitivesOptions;
  readonly #scrubber = new Scrubber();
  readonly #logger: S3Logger;
  readonly #unsafe: boolean;
  readonly #checked = new Map<string, Promise<ProviderCapabilities>>();
  #caps: ProviderCapabilities = UNPROBED;

  constructor(options: S3PrimitivesOptions = {}) {
    this.options = options;
    this.client = createClient(options, this.#scrubber);
    this.counter = options.counter ?? new RequestCounter();
    this.counter.attach(this.client);
    this.objects = new S3Objects(this.client, this.#scrubber);
    this.#logger = options.logger ?? defaultLogger;
    this.leases = new S3Leases(this.objects, () => this.#caps, (m) => this.#logger.warn(m));
    const cacheDir = options.cacheDir === undefined ? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'cairn', 's3') : options.cacheDir;
    const ns = cacheNamespace(options.endpoint ?? process.env.AWS_ENDPOINT_URL_S3 ?? process.env.AWS_ENDPOINT_URL);
    this.states = new StateReader(this.objects, new StepLister(this.objects), new TextCache(cacheDir === false ? undefined : join(cacheDir, ns, 'records')));
    // Without a cache directory inputs go to this user's private directory in the OS temp dir.
    const privateRoot = cacheDir === false ? defaultPrivateRoot() : undefined;
    this.inputs = new InputCache(this.objects, join(privateRoot !== undefined ? join(privateRoot, 'inputs') : cacheDir as string, ns, 'inputs'), privateRoot);
    this.target = describeTarget(options);
    this.#unsafe = options.unsafeNoLeases === true;
    if (this.#unsafe) this.#logger.warn(`unsafeNoLeases is set for ${this.target}: leases are NOT enforced, two runners on one prefix may build the same step at once.`);
  }

  /** What the provider enforces (after {@link check}; before it, the safe assumptions). */
  get capabilities(): ProviderCapabilities {
    return this.#caps;
  }

  /**
   * Checks, once per prefix, that the bucket exists, the credentials work, the endpoint answers
   * and conditional writes are enforced. Throws one `CAIRN_STORE` error naming the prefix and the fix.
   */
  check(url: string): Promise<ProviderCapabilities> {
    const loc = parseS3Url(url);
    const id = s3Url({ bucket: loc.bucket, key: dirKey(loc.key) });
    let p = this.#checked.get(id);
    if (!p) {
      p = (async () => {
        await learnCredentials(this.client, this.#scrubber);
        const caps = await checkStore(this.objects, loc, this.target, this.#scrubber, this.#unsafe);
        if (!caps.conditionalWrites) this.#logger.warn(`UNSAFE: ${this.target} does not enforce conditional writes (${caps.missing ?? ''}); running on ${url} anyway because unsafeNoLeases is set.`);
        this.#caps = caps;
        return caps;
      })();
      p.catch(() => this.#checked.delete(id));
      this.#checked.set(id, p);
    }
    return p;
  }

  /** Checks, writing nothing, that the store under `url` can be read (once per prefix): one clear error otherwise. */
  connect(url: string): Promise<void> {
    const loc = parseS3Url(url);
    const id = `read ${s3Url({ bucket: loc.bucket, key: dirKey(loc.key) })}`;
    let p = this.#checked.get(id) as Promise<unknown> | undefined;
    if (!p) {
      p = (async () => {
        await learnCredentials(this.client, this.#scrubber);
        await checkReadable(this.objects, loc, this.target, this.#scrubber);
      })();
      p.catch(() => this.#checked.delete(id));
      this.#checked.set(id, p as Promise<ProviderCapabilities>);
    }
    return p.then(() => undefined);
  }

  /** The bucket and key of an `s3://` URL. */
  locate(url: string): S3Location {
    return parseS3Url(url);
  }

  /**
   * Uploads a local directory under the key prefix `keyPrefix` (relative to the output path
   * `url`; default: the step directory itself) and verifies every file (size and checksum)
   * before returning. The attempt's own files under `.cairn/` (its logs) go to the step
   * directory's `.cairn/`, where every attempt's logs are kept.
   */
  upload(localDir: string, url: string, options?: UploadOptions, keyPrefix = ''): Promise<UploadedFile[]> {
    const d = stepDir(url);
    return uploadDirectory(this.objects, localDir, d.bucket, d.dir + keyPrefix, options, (path) => (path.startsWith('.cairn/') ? d.dir : d.dir + keyPrefix) + path);
  }

  /**
   * The key prefix (relative to the step directory) of the committed objects of the output at
   * `url`, read through its record (attempts.ts): null for a record of the layout before attempt
   * prefixes; throws when `url` is not a built output.
   */
  async committedObjects(url: string): Promise<{ readonly prefix: string | null; readonly recordEtag: string }> {
    const d = stepDir(url);
    const [listed] = await this.states.listings([d]);
    if (listed?.record === undefined || listed.status === undefined) {
      throw new CairnError('CAIRN_STORE', `${url} has no ${listed?.status === undefined ? STATUS_FILE : RECORD_FILE}: it is not a built output, so it cannot be fetched. Run the step that builds it first.`);
    }
    const prefix = objectsOf(await this.states.recordText(d, listed.record.etag));
    if (prefix === undefined) throw new CairnError('CAIRN_STORE', `The record of ${url} cannot be read (replaced while it was read, or not JSON): its committed objects are unknown. Retry, or rebuild the step.`, { retryable: true });
    return { prefix, recordEtag: listed.record.etag };
  }

  /**
   * A local copy of a built dependency's committed outputs at `url` (the objects its record
   * names, nothing of other attempts), downloaded at most once per host (per record identity).
   */
  async localInput(url: string): Promise<string> {
    const d = stepDir(url);
    const { prefix, recordEtag } = await this.committedObjects(url);
    if (prefix === null) return this.inputs.localDir(d.bucket, d.dir, recordEtag, isMetadata);
    return this.inputs.localDir(d.bucket, d.dir + prefix, recordEtag, () => false);
  }

  /**
   * What a step needs to write to its output location directly: `key` is the attempt's prefix
   * of the run `runId` (attempts.ts), or the step directory when no run is known (reads only).
   */
  direct(url: string, runId?: string): { readonly client: S3Client; readonly bucket: string; readonly key: string; readonly url: string } {
    const d = stepDir(url);
    return { client: this.client, bucket: d.bucket, key: runId === undefined ? d.dir : d.dir + attemptPrefix(runId), url };
  }

  /** Closes the client's sockets. */
  destroy(): void {
    this.client.destroy();
  }
}
