/**
 * `S3Store`: the runner's store contract for `s3://bucket/prefix` over {@link S3Primitives}.
 * Same layout as the filesystem store, one object per file (layout.ts):
 *
 * ```
 * {outputPath}/.executor_status        one token (Marin's format); written last
 * {outputPath}/.artifact.json          the record (JSON), written before the status
 * {outputPath}/.executor_status.lock   the lease (JSON holder), while a runner works on the step
 * {outputPath}/.cairn/job.json         the job in flight of a resumable executor
 * {outputPath}/.cairn/logs/…           the attempts' logs, uploaded with the output
 *
 * {outputPath}/@{runId}/…              an attempt's output objects; the record names the committed one
 * ```
 *
 * Staging is `upload`: an attempt writes into a local directory (its `OUT`, in this user's
 * private directory), uploaded at the commit under the attempt's own key prefix (attempts.ts),
 * which the record then names: readers resolve through the record, so they see exactly one
 * attempt's objects. The store remembers the ETag of each lease it holds: a refresh is an
 * `If-Match` on it, a release happens only while it is still ours, and a commit is fenced: the
 * lease is checked before the upload, before the record and before the status, and nothing more
 * is written once it is found lost (what the lost attempt uploaded is deleted). This file only
 * maps the contract onto the primitives; the rules live in attempts.ts, leases.ts, listing.ts,
 * outputs.ts and states.ts.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { CairnError } from '@cairn/core';
import type { AttemptLogs, CommitRequest, JobRecord, LeaseHolder, LeaseInfo, RecordWant, StagedAttempt, StepAccessRef, StepStoreAccess, Store, StoreCapabilities, StoredState, StoreMarker } from '@cairn/runner/store';
import { attemptFilesIn, attemptOfLogName, logsDirIn, markerText, parseStoreMarker, STORE_MARKER_FILE } from '@cairn/runner/store';
import { attemptOf, attemptPrefix, isAttemptKey, objectsOf, withObjects } from './attempts.js';
import { parseJobRecord } from './formats.js';
import type { StepObjects } from './listing.js';
import { defaultPrivateRoot, ensurePrivateDir } from './private-dir.js';
import { S3Browser } from './browse.js';
import { checkS3StoreOptions } from './options.js';
import { JOB_FILE, LEASE_FILE, RECORD_FILE, STATUS_FILE } from './layout.js';
import type { HeldLease } from './leases.js';
import { S3Primitives, type S3PrimitivesOptions, stepDir } from './primitives.js';
import { stepAccessOf, stepAccessRef } from './step-access.js';
import { CheckpointSync } from './checkpoint-sync.js';

/** Options of {@link S3Store}. */
export interface S3StoreOptions extends S3PrimitivesOptions {
  /** Use these primitives (and their client) instead of building new ones. */
  readonly primitives?: S3Primitives;
  /**
   * Local directory for attempts' staged outputs and logs: created 0700 when missing, refused
   * (`CAIRN_UNSAFE_DIR`) when it is a symlink, another user's, or writable by others.
   * @default `{tmpdir}/cairn-s3-{uid}/attempts` (the per-user directory created 0700 and checked)
   */
  readonly localRoot?: string;
  /**
   * Give steps a checkpoint directory (`ctx.checkpointDir`, `$CAIRN_CHECKPOINT_DIR`): a local
   * directory under `localRoot` synced with the bucket (README, "Checkpoints"). Each run pays, per
   * directory of steps, one LIST shared by the steps it stages at once (and a GET for each step
   * that has checkpoints); `false` saves it, and steps then get none.
   * @default true
   */
  readonly checkpoints?: boolean;
  /**
   * How often a running step's checkpoint directory is pushed to the bucket (also when each
   * attempt ends), in ms: what a runner killed mid-step can lose at most.
   * @default 10_000
   */
  readonly checkpointSyncMs?: number;
}

/** Deletes in flight while removing other attempts' objects. */
const DELETES = 16;

/** True when `dir` holds a file at any depth (a no-op attempt's staging directory holds none). */
async function hasFiles(dir: string): Promise<boolean> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const e of entries) if (e.isFile() || (e.isDirectory() && (await hasFiles(join(dir, e.name))))) return true;
  return false;
}

/** A fence older than this does not stand for the release's own check. */
const FENCE_FRESH_MS = 1_000;

const CAPABILITIES: StoreCapabilities = Object.freeze({ staging: 'upload' });

/** The S3 store. */
export class S3Store implements Store {
  readonly kind = 's3';
  readonly capabilities = CAPABILITIES;
  /** The primitives (client, counter, uploads, input cache). */
  readonly s3: S3Primitives;
  readonly #localRoot: string;
  /** The private directories to check before staging: `[path, strict]` (the per-user root by default). */
  readonly #private: readonly (readonly [string, boolean])[];
  #privateChecked: Promise<void> | undefined;
  /** The steps' checkpoint directories (undefined: `checkpoints: false`). */
  readonly #checkpoints: CheckpointSync | undefined;
  /** The run id of each lease this store holds, by output path: the attempt prefix of `ctx.store`. */
  readonly #runs = new Map<string, string>();
  /**
   * Leases this store holds, by output path, and when each was last fenced. A lease found lost
   * (a refresh or a fence refused) stays here marked `lost` until the path is leased again, so
   * a later commit of that step is refused too.
   */
  readonly #held = new Map<string, { lease: HeldLease; fencedAt: number; lost: boolean }>();
  /**
   * The last lease operation (refresh, fence, release) of each path: they run one after another,
   * so a fence never compares the listed ETag with one a refresh in flight is about to replace.
   */
  readonly #leaseOps = new Map<string, Promise<unknown>>();
  /** Prefixes this store has marked (`markStore`), by bucket and key prefix. */
  readonly #marked = new Map<string, Promise<void>>();

  /** How workers in other threads, processes or hosts build `ctx.store` and `ctx.localInput` (no credentials in it). */
  readonly stepAccessRef: StepAccessRef;
  /** How tools (the CLI) find and read what the store holds. */
  readonly browse: S3Browser;

  constructor(options: S3StoreOptions = {}) {
    checkS3StoreOptions(options, 'new S3Store()');
    this.s3 = options.primitives ?? new S3Primitives(options);
    if (options.localRoot === undefined) {
      const root = defaultPrivateRoot();
      this.#localRoot = join(root, 'attempts');
      this.#private = [
        [root, true],
        [this.#localRoot, true],
      ];
    } else {
      this.#localRoot = options.localRoot;
      this.#private = [[this.#localRoot, false]];
    }
    this.stepAccessRef = stepAccessRef(this.s3.options);
    this.browse = new S3Browser(this.s3.objects, (bucket, dir) => this.#committedPrefix(bucket, dir));
    this.#checkpoints =
      options.checkpoints === false
        ? undefined
        : new CheckpointSync(
            {
              objects: this.s3.objects,
              leaseLost: (path) => this.#held.get(path)?.lost === true,
              holdsLease: async (path, token) => (await this.readLease(path))?.holder?.token === token,
              warn: (m) => this.#warn(m),
            },
            options.checkpointSyncMs ?? 10_000,
          );
  }

  /** `ctx.store` (the client, bucket and the running attempt's key prefix) and `ctx.localInput` of a step in this process. */
  stepAccess(path: string): StepStoreAccess {
    return stepAccessOf(this.s3, path, this.#runs.get(path));
  }

  /**
   * Creates or checks the staging root once per store (a failure is checked again next time).
   * Once it is ours and closed to others, nobody else can replace it: the temp dir is sticky.
   */
  #checkPrivate(): Promise<void> {
    this.#privateChecked ??= (async () => {
      for (const [p, strict] of this.#private) await ensurePrivateDir(p, 'the staging directory', strict);
    })().catch((err: unknown) => {
      this.#privateChecked = undefined;
      throw err;
    });
    return this.#privateChecked;
  }

  /** The committed prefix of the step directory `dir` (attempts.ts): null for the old layout, undefined when not built. */
  async #committedPrefix(bucket: string, dir: string): Promise<string | null | undefined> {
    const [listed] = await this.s3.states.listings([{ bucket, dir }]);
    if (listed?.record === undefined) return undefined;
    return objectsOf(await this.s3.states.recordText({ bucket, dir }, listed.record.etag));
  }

  connect(prefix: string): Promise<void> {
    return this.s3.connect(prefix);
  }

  async checkWritable(prefix: string): Promise<void> {
    await this.s3.check(prefix);
  }

  /**
   * Writes the store marker (`{prefix}/.cairn/store.json`, the local store's format) unless one
   * is there: one `PUT If-None-Match: *` per prefix and store, so racing runners leave the first
   * marker whole.
   */
  markStore(prefix: string): Promise<void> {
    const d = stepDir(prefix);
    const id = `${d.bucket}/${d.dir}`;
    // Once per prefix and store, like the provider check before it (a failure is tried again next run).
    let marked = this.#marked.get(id);
    if (marked === undefined) {
      marked = this.s3.objects.createIfAbsent(d.bucket, d.dir + STORE_MARKER_FILE, markerText()).then(() => undefined);
      marked.catch(() => this.#marked.delete(id));
      this.#marked.set(id, marked);
    }
    return marked;
  }

  /** The store marker under `prefix`; null when absent or not a marker. */
  async readMarker(prefix: string): Promise<StoreMarker | null> {
    const d = stepDir(prefix);
    const got = await this.s3.objects.get(d.bucket, d.dir + STORE_MARKER_FILE);
    return got === null ? null : parseStoreMarker(got.body.toString('utf8'));
  }

  readStates(paths: readonly string[], withRecord: readonly RecordWant[] | RecordWant): Promise<StoredState[]> {
    return this.s3.states.read(paths.map(stepDir), withRecord);
  }

  /** The names one level under `dir` (a LIST with a delimiter; hidden names left out): the runner looks there for earlier builds of a step. */
  async list(dir: string): Promise<readonly string[]> {
    const d = stepDir(dir);
    const names = new Set<string>();
    let token: string | undefined;
    do {
      const page = await this.s3.objects.list(d.bucket, { prefix: d.dir, delimiter: '/', continuationToken: token });
      for (const p of page.prefixes) names.add(p.slice(d.dir.length, -1));
      for (const o of page.objects) names.add(o.key.slice(d.dir.length));
      token = page.truncated ? page.next : undefined;
    } while (token !== undefined);
    return [...names].filter((n) => n !== '' && !n.startsWith('.') && !isAttemptKey(n));
  }

  /** The local directory an attempt of `path` writes into. */
  #localDir(path: string, runId: string, attempt: number): string {
    const d = stepDir(path);
    return join(this.#localRoot, d.bucket, ...d.dir.split('/').filter((s) => s !== ''), `.cairn-attempt-${runId}-${attempt}`);
  }

  /** The local checkpoint directory of `path` in run `runId` (beside its attempts'). */
  #checkpointDir(path: string, runId: string): string {
    const d = stepDir(path);
    return join(this.#localRoot, d.bucket, ...d.dir.split('/').filter((s) => s !== ''), `.cairn-checkpoints-${runId}`);
  }

  async stage(path: string, holder: LeaseHolder, attempt: number, previous?: StagedAttempt): Promise<StagedAttempt> {
    await this.#checkPrivate();
    const dir = this.#localDir(path, holder.runId, attempt);
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true, mode: 0o700 });
    // A retry starts from an empty prefix: what the failed attempt wrote there with ctx.store goes.
    if (previous !== undefined || attempt > 1) await this.#removeAttempts(path, (p) => p === attemptPrefix(holder.runId));
    const logs = logsDirIn(dir);
    if (previous !== undefined) {
      // The earlier attempt's logs stay with the step; its output does not.
      const from = logsDirIn(previous.dir);
      const names = await readdir(from).catch(() => [] as string[]);
      if (names.length > 0) await mkdir(logs, { recursive: true });
      for (const n of names) await rename(`${from}/${n}`, `${logs}/${n}`);
      await rm(previous.dir, { recursive: true, force: true });
    }
    const f = attemptFilesIn(dir, attempt);
    const staged: StagedAttempt = { path, dir, attempt, logs: { stdout: f.stdout, stderr: f.stderr }, scratch: f.scratch };
    const ck = this.#checkpoints;
    if (ck === undefined) return staged;
    // A retry keeps its run's checkpoint directory (pushed now: the attempt before it ended); a
    // run's first attempt pulls the step's checkpoints (checkpoint-sync.ts).
    if (previous?.checkpoints !== undefined && ck.dirOf(path) === previous.checkpoints) {
      await ck.flush(path).catch((err: unknown) => this.#warn(`Pushing the checkpoints of ${path} after attempt ${previous.attempt} failed (retried at the next poll): ${String((err as Error).message ?? err)}`));
      return { ...staged, checkpoints: previous.checkpoints };
    }
    return { ...staged, checkpoints: await ck.open(path, holder, this.#checkpointDir(path, holder.runId)) };
  }

  #warn(message: string): void {
    (this.s3.options.logger ?? { warn: (m: string) => console.warn(`[cairn s3] ${m}`) }).warn(message);
  }

  async commit(path: string, holder: LeaseHolder, request: CommitRequest): Promise<void> {
    const d = stepDir(path);
    const { objects } = this.s3;
    const fenced = this.#held.has(path);
    if (!fenced) throw this.#lost(path, undefined, request.status);
    const staged = request.staged;
    // The attempt ended: its checkpoints are pushed a last time, unless its success removes them.
    const dropCheckpoints = request.status === 'SUCCESS' && request.keepCheckpoints !== true;
    const hadCheckpoints = await this.#checkpoints?.close(path, dropCheckpoints ? 'drop' : 'push');
    // The attempt's own prefix: nothing there is seen by readers until the record names it.
    const prefix = staged === undefined ? undefined : attemptPrefix(holder.runId);
    let uploaded = false;
    try {
      if (staged !== undefined && prefix !== undefined && (await hasFiles(staged.dir))) {
        // Nothing of an attempt whose lease is gone is uploaded. (An attempt that wrote no file
        // uploads nothing, so it needs no fence here: the record's fence comes next.)
        await this.#fence(path, request.status);
        uploaded = true;
        try {
          await this.s3.upload(staged.dir, path, undefined, prefix);
        } catch (err) {
          // A runner paused past its lease finds its staging directory swept by the runner that
          // took over (ENOENT), or its uploads refused: the lease loss is the error to report.
          await this.#fence(path, request.status);
          throw err;
        }
      }
      let before: StepObjects | undefined;
      if (request.record !== undefined) {
        // Fenced too: a runner that lost its lease must not replace the record of the one that took it.
        before = await this.#fence(path, request.status);
        const built = request.record.build();
        const text = `${JSON.stringify(prefix === undefined ? built : withObjects(built, prefix), null, 2)}\n`;
        const etag = await objects.put(d.bucket, d.dir + RECORD_FILE, text, 'application/json');
        this.s3.states.remember(d, etag, text);
      }
      await this.#fence(path, request.status);
      await objects.put(d.bucket, d.dir + STATUS_FILE, request.status, 'text/plain');
      // The output is this attempt's now: other prefixes (the previous build, dead attempts) go.
      // A step with no record before had no committed prefix, and what dead attempts left was
      // swept when their lease was taken over (sweep): then the listing is skipped (a cold step's cost).
      if (prefix !== undefined && before?.record !== undefined) await this.#removeAttempts(path, (p) => p !== prefix);
      // Published: the checkpoints go (those of an earlier run too; known absent when this run pulled none and pushed none).
      if (this.#checkpoints !== undefined && dropCheckpoints && hadCheckpoints !== false) await this.#checkpoints.remove(path).catch((err: unknown) => this.#warn(`Removing the checkpoints of ${path} failed (cairn clean removes them): ${String((err as Error).message ?? err)}`));
    } catch (err) {
      // What a fenced-out attempt uploaded is its own prefix's: remove it (no reader resolves to it).
      if (prefix !== undefined && uploaded && this.#held.get(path)?.lost === true) await this.#removeAttempts(path, (p) => p === prefix).catch(() => undefined);
      throw err;
    } finally {
      if (staged !== undefined) await rm(staged.dir, { recursive: true, force: true });
    }
    if (request.release === true) await this.releaseLease(path, holder);
  }

  /** Deletes the objects of the attempt prefixes of `path` that `which` selects. */
  async #removeAttempts(path: string, which: (prefix: string) => boolean): Promise<void> {
    const d = stepDir(path);
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page = await this.s3.objects.list(d.bucket, { prefix: `${d.dir}@`, continuationToken: token });
      for (const o of page.objects) {
        const p = attemptOf(o.key.slice(d.dir.length));
        if (p !== undefined && which(p)) keys.push(o.key);
      }
      token = page.truncated ? page.next : undefined;
    } while (token !== undefined);
    let next = 0;
    const worker = async () => {
      while (next < keys.length) await this.s3.objects.delete(d.bucket, keys[next++] as string);
    };
    await Promise.all(Array.from({ length: Math.min(DELETES, keys.length) }, worker));
  }

  /** Throws CAIRN_LEASE_LOST unless our lease is still the current version (a batched LIST shows its ETag); the step's listing. */
  #fence(path: string, status: string): Promise<StepObjects | undefined> {
    return this.#serial(path, async () => {
      // Read after the previous lease operation settled: a refresh may have replaced the ETag.
      const held = this.#held.get(path);
      const [now] = held === undefined || held.lost ? [undefined] : await this.s3.states.listings([stepDir(path)]);
      if (held === undefined || held.lost || now?.lease?.etag !== held.lease.etag) {
        if (held !== undefined) held.lost = true;
        throw this.#lost(path, undefined, status);
      }
      held.fencedAt = Date.now();
      return now;
    });
  }

  /** Runs `op` after the path's previous lease operation settled. */
  #serial<T>(path: string, op: () => Promise<T>): Promise<T> {
    const prev = this.#leaseOps.get(path) ?? Promise.resolve();
    const next = prev.then(op, op);
    const settled = next.catch(() => undefined);
    this.#leaseOps.set(path, settled);
    void settled.then(() => {
      if (this.#leaseOps.get(path) === settled) this.#leaseOps.delete(path);
    });
    return next;
  }

  async createLease(path: string, holder: LeaseHolder): Promise<boolean> {
    const d = stepDir(path);
    const lease = await this.s3.leases.create(d.bucket, d.dir + LEASE_FILE, holder);
    if (lease === null) return false;
    this.#held.set(path, { lease, fencedAt: 0, lost: false });
    this.#runs.set(path, holder.runId);
    return true;
  }

  async readLease(path: string): Promise<LeaseInfo | null> {
    const d = stepDir(path);
    return this.s3.leases.read(d.bucket, d.dir + LEASE_FILE);
  }

  refreshLease(path: string, holder: LeaseHolder): Promise<boolean> {
    return this.#serial(path, () => this.#refresh(path, holder));
  }

  async #refresh(path: string, holder: LeaseHolder): Promise<boolean> {
    const d = stepDir(path);
    const held = this.#held.get(path);
    if (held?.lost) return false;
    let lease = held?.lease;
    if (lease === undefined) {
      // Not created by this store instance: adopt it only if it carries the holder's token.
      const now = await this.s3.leases.read(d.bucket, d.dir + LEASE_FILE);
      if (now?.holder?.token !== holder.token) return false;
      lease = { bucket: d.bucket, key: d.dir + LEASE_FILE, etag: now.etag, token: holder.token };
    }
    const next = await this.s3.leases.refresh(lease, holder);
    const entry = this.#held.get(path);
    if (next === null) {
      if (entry !== undefined) entry.lost = true;
      return false;
    }
    if (entry !== undefined) entry.lease = next;
    else this.#held.set(path, { lease: next, fencedAt: 0, lost: false });
    this.#runs.set(path, holder.runId);
    return true;
  }

  #lost(path: string, by: string | undefined, status: string): CairnError {
    return new CairnError('CAIRN_LEASE_LOST', `The lease of ${path} is no longer this runner's${by ? ` (now held by ${by})` : ''}: ${status} was not committed and nothing more was written.`, { retryable: false });
  }

  releaseLease(path: string, holder: LeaseHolder): Promise<void> {
    return this.#serial(path, async () => {
      const held = this.#held.get(path);
      // Only our own lease is ever released.
      if (held === undefined || held.lease.token !== holder.token) return;
      this.#held.delete(path);
      this.#runs.delete(path);
      if (held.lost) return;
      await this.s3.leases.release(held.lease, Date.now() - held.fencedAt < FENCE_FRESH_MS);
    });
  }

  async breakLease(path: string, observed: LeaseInfo): Promise<boolean> {
    const d = stepDir(path);
    const key = d.dir + LEASE_FILE;
    let etag = observed.etag;
    if (etag === undefined) {
      const now = await this.s3.leases.read(d.bucket, key);
      if (now === null || now.raw !== observed.raw) return false;
      etag = now.etag;
    }
    // Replace the stale lease with a fresh placeholder only if it is still what was observed:
    // of two breakers exactly one gets past this. Nobody takes a fresh placeholder over, so
    // deleting it next is safe; the caller then creates its lease with If-None-Match.
    const placeholder: LeaseHolder = {
      worker_id: `${hostname()}-${process.pid}-takeover`,
      timestamp: Date.now() / 1000,
      host: hostname(),
      pid: process.pid,
      processStartTime: null,
      runId: 'takeover',
      token: `takeover.${randomBytes(8).toString('hex')}`,
    };
    const taken = await this.s3.leases.takeover(d.bucket, key, etag, placeholder);
    if (taken === null) return false;
    await this.s3.objects.delete(d.bucket, key);
    return true;
  }

  async abandon(staged: StagedAttempt): Promise<void> {
    // The lease is lost: nothing more is pushed.
    if (staged.checkpoints !== undefined && this.#checkpoints?.dirOf(staged.path) === staged.checkpoints) await this.#checkpoints.close(staged.path, 'drop');
    await rm(staged.dir, { recursive: true, force: true });
  }

  async sweep(path: string, keep?: StagedAttempt): Promise<void> {
    // Dead attempts left objects under their own prefixes (a runner killed mid-upload, a direct
    // write): no reader sees them, and they go now, except the committed output and our own.
    const d = stepDir(path);
    const committed = await this.#committedPrefix(d.bucket, d.dir);
    const ours = this.#runs.get(path);
    await this.#removeAttempts(path, (p) => p !== committed && (ours === undefined || p !== attemptPrefix(ours)));
    // This host's leftovers are local.
    const local = this.#localDir(path, 'x', 1);
    const parent = local.slice(0, local.lastIndexOf('/'));
    for (const n of await readdir(parent).catch(() => [] as string[])) {
      const full = `${parent}/${n}`;
      if (n.startsWith('.cairn-attempt-') && full !== keep?.dir) await rm(full, { recursive: true, force: true });
      // Dead runs' local checkpoint copies (the bucket has what they pushed).
      else if (n.startsWith('.cairn-checkpoints-') && full !== keep?.checkpoints && full !== this.#checkpoints?.dirOf(path)) await rm(full, { recursive: true, force: true });
    }
  }

  async writeJob(path: string, job: JobRecord): Promise<void> {
    const d = stepDir(path);
    await this.s3.objects.put(d.bucket, d.dir + JOB_FILE, `${JSON.stringify(job, null, 2)}\n`, 'application/json');
  }

  async readJob(path: string): Promise<JobRecord | null> {
    const d = stepDir(path);
    const got = await this.s3.objects.get(d.bucket, d.dir + JOB_FILE).catch(() => null);
    return got === null ? null : parseJobRecord(got.body.toString('utf8'));
  }

  async removeJob(path: string): Promise<void> {
    const d = stepDir(path);
    await this.s3.objects.delete(d.bucket, d.dir + JOB_FILE);
  }

  async attemptLogs(path: string): Promise<readonly AttemptLogs[]> {
    // Committed logs are objects under the output URL; a running attempt's are local files of the runner's host.
    const out: AttemptLogs[] = [];
    const d = stepDir(path);
    const logs = `${d.dir}.cairn/logs/`;
    const committed = new Set<number>();
    let token: string | undefined;
    do {
      const page = await this.s3.objects.list(d.bucket, { prefix: logs, continuationToken: token });
      for (const o of page.objects) {
        const a = attemptOfLogName(o.key.slice(logs.length));
        if (a !== undefined) committed.add(a);
      }
      token = page.truncated ? page.next : undefined;
    } while (token !== undefined);
    for (const n of committed) {
      const f = attemptFilesIn(path, n);
      out.push({ attempt: n, stdout: f.stdout, stderr: f.stderr, running: false });
    }
    const local = this.#localDir(path, 'x', 1);
    const parent = local.slice(0, local.lastIndexOf('/'));
    for (const n of (await readdir(parent).catch(() => [] as string[])).sort()) {
      const m = /^\.cairn-attempt-.+-(\d+)$/.exec(n);
      if (m === null) continue;
      const attempt = Number(m[1]);
      const f = attemptFilesIn(`${parent}/${n}`, attempt);
      out.push({ attempt, stdout: f.stdout, stderr: f.stderr, running: true });
    }
    return out.sort((a, b) => a.attempt - b.attempt || Number(a.running) - Number(b.running));
  }
}
