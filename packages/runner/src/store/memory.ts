/**
 * An in-memory store with the same semantics as {@link LocalStore}: for tests and for
 * measuring the scheduler without the filesystem. Nothing is shared between processes.
 */
import { tmpdir } from 'node:os';
import { CairnError, hasScheme } from '@cairn/core';
import { PathIndex } from '../path-index.js';
import { DirIndex } from './dir-index.js';
import { type LeaseHolder, type LeaseInfo, parseHolder } from './leases.js';
import type { ArtifactRecord, DeferredRecord, JobRecord } from './records.js';
import type { StatusToken } from './status.js';
import type { AttemptLogs, CommitRequest, Maybe, RecordWant, StagedAttempt, Store, StoreCapabilities, StoredState } from './store.js';
import { recordWantAt } from './record-want.js';
import { STORE_FORMAT_VERSION, type StoreMarker } from './marker.js';
import { MemoryBrowser } from './memory-browse.js';
import { attemptFilesIn } from './attempt-files.js';

/** What the store holds for one step (every field undefined until written). */
export interface MemoryEntry {
  /** The step's output path. */
  readonly path: string;
  status: StatusToken | undefined;
  /** The holder object itself (never its JSON: the text is made only when a lease is read). */
  lease: LeaseHolder | undefined;
  /** The holder's `timestamp` (epoch s) when the lease was written: a run's one holder object is shared by its leases. */
  leaseTs: number;
  job: JobRecord | undefined;
  /** The record (one committed deferred is built when the entry is read through `entries`, or its state with the record). */
  record: ArtifactRecord | undefined;
  /** A record committed deferred and not built yet (`record` is undefined meanwhile). */
  deferred: DeferredRecord | undefined;
}

/**
 * A new entry. An object literal, not a class instance: entries live as long as the store, and V8
 * allocates a literal whose allocation site has seen nearly all its objects survive straight
 * into the old generation instead of copying each out of the young one.
 */
function newEntry(path: string): MemoryEntry {
  return { path, status: undefined, lease: undefined, leaseTs: 0, job: undefined, record: undefined, deferred: undefined };
}

/** The entry's record, building a deferred one now (once). */
function recordOf(e: MemoryEntry): ArtifactRecord | undefined {
  const d = e.deferred;
  if (d !== undefined) {
    e.record = d.build();
    e.deferred = undefined;
  }
  return e.record;
}

/** The store's entries by output path: a read-only map, plus `delete` (tests remove entries to simulate lost outputs). */
export interface MemoryEntries extends ReadonlyMap<string, MemoryEntry> {
  delete(path: string): boolean;
}

/**
 * The entries by path ({@link PathIndex}), remembering the last entry found: the runner touches
 * one step's entry several times in a row (prepare → lease → commit → release). Every change to
 * the table forgets it.
 */
class Entries implements MemoryEntries {
  readonly #index = new PathIndex<MemoryEntry>();
  #lastPath: string | undefined = undefined;
  #lastEntry: MemoryEntry | undefined = undefined;
  /** Names under each directory (`list`, dir-index.ts): made at the first listing, then fed each new entry (a run that never lists pays nothing). */
  #dirs: DirIndex | undefined = undefined;

  get size(): number {
    return this.#index.size;
  }

  /** Makes room for `n` more entries. */
  reserve(n: number): void {
    this.#index.reserve(this.#index.size + n);
  }

  /** The entry at `path`, as the store sees it (a deferred record stays deferred). */
  find(path: string): MemoryEntry | undefined {
    if (path === this.#lastPath) return this.#lastEntry;
    const e = this.#index.get(path);
    if (e !== undefined) {
      this.#lastPath = path;
      this.#lastEntry = e;
    }
    return e;
  }

  /** The entry at `path`, with its record built. */
  get(path: string): MemoryEntry | undefined {
    const e = this.find(path);
    if (e !== undefined) recordOf(e);
    return e;
  }

  has(path: string): boolean {
    return this.find(path) !== undefined;
  }

  /** The entry at `path`, created when there is none. */
  ensure(path: string): MemoryEntry {
    let e = this.find(path);
    if (e === undefined) {
      e = newEntry(path);
      this.#index.add(e);
      this.#dirs?.add(path);
      // Made right before the step's next operation, which will ask for it.
      this.#lastPath = path;
      this.#lastEntry = e;
    }
    return e;
  }

  delete(path: string): boolean {
    if (path === this.#lastPath) this.#lastPath = this.#lastEntry = undefined;
    // The directory index only grows: a removal (tests) makes the next listing build a new one.
    this.#dirs = undefined;
    return this.#index.delete(path);
  }

  clear(): void {
    this.#lastPath = this.#lastEntry = undefined;
    this.#index.clear();
    this.#dirs = undefined;
  }

  /** The names directly under `dir` of entries and of directories holding entries (costs what it returns, plus the entries added since the last call). */
  names(dir: string): string[] {
    if (this.#dirs === undefined) {
      const dirs = new DirIndex();
      for (const e of this.#index.values()) dirs.add(e.path);
      this.#dirs = dirs;
    }
    return this.#dirs.names(dir);
  }

  *entries(): MapIterator<[string, MemoryEntry]> {
    for (const e of this.values()) yield [e.path, e];
  }

  *keys(): MapIterator<string> {
    for (const e of this.#index.values()) yield e.path;
  }

  *values(): MapIterator<MemoryEntry> {
    for (const e of this.#index.values()) {
      recordOf(e);
      yield e;
    }
  }

  [Symbol.iterator](): MapIterator<[string, MemoryEntry]> {
    return this.entries();
  }

  forEach(fn: (value: MemoryEntry, key: string, map: ReadonlyMap<string, MemoryEntry>) => void, thisArg?: unknown): void {
    for (const e of this.values()) fn.call(thisArg, e, e.path, this);
  }
}

/** The state of a step with no status (shared: most reads of a cold run find nothing). */
const ABSENT: StoredState = Object.freeze({ status: null });
const ABSENT_WITH_RECORD: StoredState = Object.freeze({ status: null, record: null });
const CAPABILITIES: StoreCapabilities = Object.freeze({ staging: 'none', durable: false });
const NO_LOGS: readonly AttemptLogs[] = Object.freeze([]);

/**
 * Where a step of a memory store at `path` writes files (its output, logs, scratch): the path
 * itself for a plain path; for a URL (a memory store registered for a scheme, `mem://…`) a
 * directory under the system's temporary directory, so nothing lands at a relative `mem:/…`.
 */
function localBase(path: string): string {
  return hasScheme(path) ? `${tmpdir()}/cairn-memory-${process.pid}/${path.replace('://', '/')}` : path;
}

/** The staging of a memory step: its output path itself (nothing is on disk); log paths made when asked. */
class MemoryStaged implements StagedAttempt {
  constructor(
    readonly path: string,
    readonly attempt: number,
  ) {}

  get dir(): string {
    return localBase(this.path);
  }

  get logs(): { stdout: string; stderr: string } {
    const f = attemptFilesIn(localBase(this.path), this.attempt);
    return { stdout: f.stdout, stderr: f.stderr };
  }

  get scratch(): string {
    return attemptFilesIn(localBase(this.path), this.attempt).scratch;
  }

  toJSON(): StagedAttempt {
    return { path: this.path, dir: this.dir, attempt: this.attempt, logs: this.logs, scratch: this.scratch };
  }
}

/** The in-memory store: every operation answers synchronously. */
export class MemoryStore implements Store {
  readonly kind = 'memory';
  readonly capabilities = CAPABILITIES;
  readonly #map = new Entries();
  /** Entries by output path (inspect in tests). */
  readonly entries: MemoryEntries = this.#map;
  /** How tools (the CLI) read the store. */
  readonly browse: MemoryBrowser = new MemoryBrowser(this.#map);

  /** Sizes the entry table for `steps` more entries (see {@link Store.reserve}). */
  reserve(steps: number): void {
    this.#map.reserve(steps);
  }

  readStates(paths: readonly string[], withRecord: readonly RecordWant[] | RecordWant): Maybe<StoredState[]> {
    const out = new Array<StoredState>(paths.length);
    for (let i = 0; i < paths.length; i++) {
      const e = this.#map.find(paths[i] as string);
      const status = e?.status ?? null;
      // 'head' reads the whole record: it is in memory already.
      const want = recordWantAt(withRecord, i) !== false;
      if (status === null && (e === undefined || !want || (e.record === undefined && e.deferred === undefined))) out[i] = want ? ABSENT_WITH_RECORD : ABSENT;
      else out[i] = want ? { status, record: recordOf(e as MemoryEntry) ?? null } : { status };
    }
    return out;
  }

  /** Names of the steps stored directly under `dir` (hidden names left out), from an index of the entries' directories. */
  list(dir: string): Maybe<readonly string[]> {
    return this.#map.names(dir).filter((name) => name !== '' && !name.startsWith('.'));
  }

  checkWritable(): Maybe<void> {}

  /** Prefixes marked as stores (marker.ts), with their marker. */
  readonly #markers = new Map<string, StoreMarker>();

  markStore(prefix: string): Maybe<void> {
    if (!this.#markers.has(prefix)) this.#markers.set(prefix, { format: 'cairn-store', version: STORE_FORMAT_VERSION, created: Date.now() });
  }

  readMarker(prefix: string): Maybe<StoreMarker | null> {
    return this.#markers.get(prefix) ?? null;
  }

  createLease(path: string, holder: LeaseHolder): Maybe<boolean> {
    const e = this.#map.ensure(path);
    if (e.lease !== undefined) return false;
    e.lease = holder;
    e.leaseTs = holder.timestamp;
    return true;
  }

  readLease(path: string): Maybe<LeaseInfo | null> {
    const e = this.#map.find(path);
    if (e?.lease === undefined) return null;
    const raw = JSON.stringify({ ...e.lease, timestamp: e.leaseTs });
    return { holder: parseHolder(raw), raw, mtimeMs: e.leaseTs * 1000, location: path };
  }

  refreshLease(path: string, holder: LeaseHolder): Maybe<boolean> {
    const e = this.#map.find(path);
    if (e?.lease?.token !== holder.token) return false;
    e.lease = holder;
    e.leaseTs = holder.timestamp;
    return true;
  }

  /** Writes a lease as another runner would (tests: stale or foreign holders). */
  putLease(path: string, holder: LeaseHolder): void {
    const e = this.#map.ensure(path);
    e.lease = { ...holder };
    e.leaseTs = holder.timestamp;
  }

  breakLease(path: string, observed: LeaseInfo): Maybe<boolean> {
    const e = this.#map.find(path);
    if (e?.lease === undefined || JSON.stringify({ ...e.lease, timestamp: e.leaseTs }) !== observed.raw) return false;
    e.lease = undefined;
    return true;
  }

  releaseLease(path: string, holder: LeaseHolder): Maybe<void> {
    const e = this.#map.find(path);
    if (e !== undefined && e.lease?.token === holder.token) e.lease = undefined;
  }

  stage(path: string, _holder: LeaseHolder, attempt: number): Maybe<StagedAttempt> {
    return new MemoryStaged(path, attempt);
  }

  commit(path: string, holder: LeaseHolder, request: CommitRequest): Maybe<void> {
    const e = this.#map.ensure(path);
    if (e.lease?.token !== holder.token) {
      throw new CairnError('CAIRN_LEASE_LOST', `The lease of ${path} is no longer this runner's; nothing was committed.`, { retryable: false });
    }
    const record = request.record;
    if (record !== undefined) {
      // A subclass that overrides commitRecord (to observe or alter commits) sees every record built.
      if (this.commitRecord !== MemoryStore.prototype.commitRecord) this.commitRecord(path, record.build());
      else {
        e.deferred = record;
        e.record = undefined;
      }
    }
    e.status = request.status;
    if (request.release === true) e.lease = undefined;
  }

  /** Where a committed record goes; override to observe records (they are then built at once). */
  commitRecord(path: string, record: ArtifactRecord): void {
    const e = this.#map.ensure(path);
    e.record = record;
    e.deferred = undefined;
  }

  /** Sets a step's status (and record) directly, as another runner's commit would (tests). */
  put(path: string, status: StatusToken, record?: ArtifactRecord): void {
    const e = this.#map.ensure(path);
    e.status = status;
    if (record !== undefined) {
      e.record = record;
      e.deferred = undefined;
    }
  }

  abandon(): Maybe<void> {}

  sweep(): Maybe<void> {}

  writeJob(path: string, job: JobRecord): Maybe<void> {
    this.#map.ensure(path).job = job;
  }

  readJob(path: string): Maybe<JobRecord | null> {
    return this.#map.find(path)?.job ?? null;
  }

  removeJob(path: string): Maybe<void> {
    const e = this.#map.find(path);
    if (e) e.job = undefined;
  }

  attemptLogs(): Maybe<readonly AttemptLogs[]> {
    return NO_LOGS;
  }
}
