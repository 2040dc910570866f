/**
 * An in-memory store with the same semantics as {@link LocalStore}: for tests and for
 * measuring the scheduler without the filesystem. Nothing is shared between processes.
 */
import { PathIndex } from '../path-index.js';
import { type LeaseHolder, type LeaseInfo, parseHolder } from './leases.js';
import type { ArtifactRecord, DeferredRecord, JobRecord } from './records.js';
import type { StatusToken } from './status.js';
import { type AttemptFiles, mirrorsAsync, type Store, type StoredState, type SyncStoreOps } from './store.js';

/** What the store holds for one step (every field undefined until written). */
export interface MemoryEntry {
  /** The step's output path. */
  readonly path: string;
  status: StatusToken | undefined;
  /** The holder object itself (never its JSON: the text is made only when a lease is read). */
  lease: LeaseHolder | undefined;
  /**
   * When the lease was last written, epoch ms; undefined while it is the holder's own creation
   * time (`timestamp`, epoch s): no clock read and no number kept per lease.
   */
  leaseMtimeMs: number | undefined;
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
  return { path, status: undefined, lease: undefined, leaseMtimeMs: undefined, job: undefined, record: undefined, deferred: undefined };
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
      // Made right before the step's next operation, which will ask for it.
      this.#lastPath = path;
      this.#lastEntry = e;
    }
    return e;
  }

  delete(path: string): boolean {
    if (path === this.#lastPath) this.#lastPath = this.#lastEntry = undefined;
    return this.#index.delete(path);
  }

  clear(): void {
    this.#lastPath = this.#lastEntry = undefined;
    this.#index.clear();
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

/** The in-memory store. */
export class MemoryStore implements Store, SyncStoreOps {
  readonly kind = 'memory';
  /** Every operation is synchronous underneath (not offered to a subclass that overrides the async ones). */
  readonly sync: SyncStoreOps | undefined = mirrorsAsync(this, MemoryStore) ? this : undefined;
  readonly #map = new Entries();
  /** Entries by output path (inspect in tests). */
  readonly entries: MemoryEntries = this.#map;

  /** Sizes the entry table for `steps` more entries (see {@link Store.reserve}). */
  reserve(steps: number): void {
    this.#map.reserve(steps);
  }

  #entry(path: string): MemoryEntry {
    return this.#map.ensure(path);
  }

  async readStates(paths: readonly string[], withRecord: readonly boolean[] | boolean): Promise<StoredState[]> {
    return this.readStatesSync(paths, withRecord);
  }

  readStatesSync(paths: readonly string[], withRecord: readonly boolean[] | boolean): StoredState[] {
    const out = new Array<StoredState>(paths.length);
    for (let i = 0; i < paths.length; i++) {
      const e = this.#map.find(paths[i] as string);
      const status = e?.status ?? null;
      const want = typeof withRecord === 'boolean' ? withRecord : withRecord[i] === true;
      if (status === null && (e === undefined || !want || (e.record === undefined && e.deferred === undefined))) out[i] = want ? ABSENT_WITH_RECORD : ABSENT;
      else out[i] = want ? { status, record: recordOf(e as MemoryEntry) ?? null } : { status };
    }
    return out;
  }

  async prepare(path: string): Promise<void> {
    this.#entry(path);
  }

  prepareSync(path: string): boolean {
    const n = this.#map.size;
    this.#map.ensure(path);
    return this.#map.size > n;
  }

  async commit(path: string, status: StatusToken, record?: ArtifactRecord): Promise<void> {
    this.commitSync(path, status, record);
  }

  commitSync(path: string, status: StatusToken, record?: ArtifactRecord): void {
    const e = this.#entry(path);
    if (record !== undefined) {
      e.record = record;
      e.deferred = undefined;
    }
    e.status = status;
  }

  commitDeferredSync(path: string, status: StatusToken, record: DeferredRecord): void {
    // A subclass that overrides commitSync (to observe or alter commits) sees every record.
    if (this.commitSync !== MemoryStore.prototype.commitSync) {
      this.commitSync(path, status, record.build());
      return;
    }
    const e = this.#entry(path);
    e.deferred = record;
    e.record = undefined;
    e.status = status;
  }

  async createLease(path: string, holder: LeaseHolder): Promise<boolean> {
    return this.createLeaseSync(path, holder);
  }

  createLeaseSync(path: string, holder: LeaseHolder): boolean {
    const e = this.#entry(path);
    if (e.lease !== undefined) return false;
    e.lease = holder;
    e.leaseMtimeMs = typeof holder.timestamp === 'number' ? undefined : Date.now();
    return true;
  }

  async readLease(path: string): Promise<LeaseInfo | null> {
    const e = this.#map.find(path);
    if (e?.lease === undefined) return null;
    const raw = JSON.stringify(e.lease);
    return { holder: parseHolder(raw), raw, mtimeMs: e.leaseMtimeMs ?? e.lease.timestamp * 1000 };
  }

  async writeLease(path: string, holder: LeaseHolder): Promise<void> {
    const e = this.#entry(path);
    // A copy: the caller may change its holder later (a refresh), as a file would not change.
    e.lease = { ...holder };
    e.leaseMtimeMs = Date.now();
  }

  async removeLease(path: string): Promise<void> {
    this.removeLeaseSync(path);
  }

  removeLeaseSync(path: string): void {
    const e = this.#map.find(path);
    if (e !== undefined) e.lease = undefined;
  }

  async breakLease(path: string, observed: LeaseInfo): Promise<boolean> {
    const e = this.#map.find(path);
    if (e?.lease === undefined || JSON.stringify(e.lease) !== observed.raw) return false;
    e.lease = undefined;
    return true;
  }

  async writeJob(path: string, job: JobRecord): Promise<void> {
    this.#entry(path).job = job;
  }

  async readJob(path: string): Promise<JobRecord | null> {
    return this.#map.find(path)?.job ?? null;
  }

  async removeJob(path: string): Promise<void> {
    const e = this.#map.find(path);
    if (e) e.job = undefined;
  }

  attemptFiles(path: string, attempt: number): AttemptFiles {
    return { stdout: `${path}/.cairn/logs/attempt-${attempt}.stdout`, stderr: `${path}/.cairn/logs/attempt-${attempt}.stderr`, dir: `${path}/.cairn/attempt-${attempt}` };
  }
}
