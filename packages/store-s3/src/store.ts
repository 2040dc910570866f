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
 * ```
 *
 * Staging is `upload`: an attempt writes into a local directory (its `OUT`), uploaded at the
 * commit. The store remembers the ETag of each lease it holds: a refresh is an `If-Match` on it,
 * a release happens only while it is still ours, and a commit is fenced: the lease is checked
 * before the upload, before the record and before the status, and nothing more is written once it
 * is found lost. This file only maps the contract onto the primitives; the rules live in
 * leases.ts, listing.ts, outputs.ts and states.ts.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { CairnError } from '@cairn/core';
import type { AttemptLogs, CommitRequest, JobRecord, LeaseHolder, LeaseInfo, RecordWant, StagedAttempt, StepAccessRef, StepStoreAccess, Store, StoreCapabilities, StoredState } from '@cairn/runner/store';
import { parseJobRecord } from './formats.js';
import { S3Browser } from './browse.js';
import { checkS3StoreOptions } from './options.js';
import { JOB_FILE, LEASE_FILE, RECORD_FILE, STATUS_FILE } from './layout.js';
import type { HeldLease } from './leases.js';
import { S3Primitives, type S3PrimitivesOptions, stepDir } from './primitives.js';
import { stepAccessOf, stepAccessRef } from './step-access.js';

/** Options of {@link S3Store}. */
export interface S3StoreOptions extends S3PrimitivesOptions {
  /** Use these primitives (and their client) instead of building new ones. */
  readonly primitives?: S3Primitives;
  /** Local directory for attempts' staged outputs and logs. @default `{tmpdir}/cairn-s3-attempts` */
  readonly localRoot?: string;
}

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

  /** How workers in other threads, processes or hosts build `ctx.store` and `ctx.localInput` (no credentials in it). */
  readonly stepAccessRef: StepAccessRef;
  /** How tools (the CLI) find and read what the store holds. */
  readonly browse: S3Browser;

  constructor(options: S3StoreOptions = {}) {
    checkS3StoreOptions(options, 'new S3Store()');
    this.s3 = options.primitives ?? new S3Primitives(options);
    this.#localRoot = options.localRoot ?? join(tmpdir(), 'cairn-s3-attempts');
    this.stepAccessRef = stepAccessRef(this.s3.options);
    this.browse = new S3Browser(this.s3.objects);
  }

  /** `ctx.store` (the client, bucket and key of the step's output URL) and `ctx.localInput` of a step in this process. */
  stepAccess(path: string): StepStoreAccess {
    return stepAccessOf(this.s3, path);
  }

  connect(prefix: string): Promise<void> {
    return this.s3.connect(prefix);
  }

  async checkWritable(prefix: string): Promise<void> {
    await this.s3.check(prefix);
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
    return [...names].filter((n) => n !== '' && !n.startsWith('.'));
  }

  /** The local directory an attempt of `path` writes into. */
  #localDir(path: string, runId: string, attempt: number): string {
    const d = stepDir(path);
    return join(this.#localRoot, d.bucket, ...d.dir.split('/').filter((s) => s !== ''), `.cairn-attempt-${runId}-${attempt}`);
  }

  async stage(path: string, holder: LeaseHolder, attempt: number, previous?: StagedAttempt): Promise<StagedAttempt> {
    const dir = this.#localDir(path, holder.runId, attempt);
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    const logs = `${dir}/.cairn/logs`;
    if (previous !== undefined) {
      // The earlier attempt's logs stay with the step; its output does not.
      const from = `${previous.dir}/.cairn/logs`;
      const names = await readdir(from).catch(() => [] as string[]);
      if (names.length > 0) await mkdir(logs, { recursive: true });
      for (const n of names) await rename(`${from}/${n}`, `${logs}/${n}`);
      await rm(previous.dir, { recursive: true, force: true });
    }
    return { path, dir, attempt, logs: { stdout: `${logs}/attempt-${attempt}.stdout`, stderr: `${logs}/attempt-${attempt}.stderr` }, scratch: `${dir}/.cairn/attempt-${attempt}` };
  }

  async commit(path: string, holder: LeaseHolder, request: CommitRequest): Promise<void> {
    const d = stepDir(path);
    const { objects } = this.s3;
    const fenced = this.#held.has(path);
    if (!fenced) throw this.#lost(path, undefined, request.status);
    const staged = request.staged;
    try {
      if (staged !== undefined && (await hasFiles(staged.dir))) {
        // Nothing of an attempt whose lease is gone is uploaded. (An attempt that wrote no file
        // uploads nothing, so it needs no fence here: the record's fence comes next.)
        await this.#fence(path, request.status);
        await this.s3.upload(staged.dir, path);
      }
      if (request.record !== undefined) {
        // Fenced too: a runner that lost its lease must not replace the record of the one that took it.
        await this.#fence(path, request.status);
        const text = `${JSON.stringify(request.record.build(), null, 2)}\n`;
        const etag = await objects.put(d.bucket, d.dir + RECORD_FILE, text, 'application/json');
        this.s3.states.remember(d, etag, text);
      }
      await this.#fence(path, request.status);
      await objects.put(d.bucket, d.dir + STATUS_FILE, request.status, 'text/plain');
    } finally {
      if (staged !== undefined) await rm(staged.dir, { recursive: true, force: true });
    }
    if (request.release === true) await this.releaseLease(path, holder);
  }

  /** Throws CAIRN_LEASE_LOST unless our lease is still the current version (a batched LIST shows its ETag). */
  #fence(path: string, status: string): Promise<void> {
    return this.#serial(path, async () => {
      // Read after the previous lease operation settled: a refresh may have replaced the ETag.
      const held = this.#held.get(path);
      const [now] = held === undefined || held.lost ? [undefined] : await this.s3.states.listings([stepDir(path)]);
      if (held === undefined || held.lost || now?.lease?.etag !== held.lease.etag) {
        if (held !== undefined) held.lost = true;
        throw this.#lost(path, undefined, status);
      }
      held.fencedAt = Date.now();
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
    await rm(staged.dir, { recursive: true, force: true });
  }

  async sweep(path: string, keep?: StagedAttempt): Promise<void> {
    // Dead attempts of other hosts left nothing in the bucket (outputs are uploaded at the commit);
    // this host's leftovers are local.
    const local = this.#localDir(path, 'x', 1);
    const parent = local.slice(0, local.lastIndexOf('/'));
    for (const n of await readdir(parent).catch(() => [] as string[])) {
      const full = `${parent}/${n}`;
      if (n.startsWith('.cairn-attempt-') && full !== keep?.dir) await rm(full, { recursive: true, force: true });
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
        const m = /^attempt-(\d+)\.(?:stdout|stderr)$/.exec(o.key.slice(logs.length));
        if (m !== null) committed.add(Number(m[1]));
      }
      token = page.truncated ? page.next : undefined;
    } while (token !== undefined);
    const url = (n: number, which: string) => `${path}/.cairn/logs/attempt-${n}.${which}`;
    for (const n of committed) out.push({ attempt: n, stdout: url(n, 'stdout'), stderr: url(n, 'stderr'), running: false });
    const local = this.#localDir(path, 'x', 1);
    const parent = local.slice(0, local.lastIndexOf('/'));
    for (const n of (await readdir(parent).catch(() => [] as string[])).sort()) {
      const m = /^\.cairn-attempt-.+-(\d+)$/.exec(n);
      if (m === null) continue;
      const attempt = Number(m[1]);
      out.push({ attempt, stdout: `${parent}/${n}/.cairn/logs/attempt-${attempt}.stdout`, stderr: `${parent}/${n}/.cairn/logs/attempt-${attempt}.stderr`, running: true });
    }
    return out.sort((a, b) => a.attempt - b.attempt || Number(a.running) - Number(b.running));
  }
}
