/**
 * An in-memory store with the same semantics as {@link LocalStore}: for tests and for
 * measuring the scheduler without the filesystem. Nothing is shared between processes.
 */
import { type LeaseHolder, type LeaseInfo, parseHolder } from './leases.js';
import type { ArtifactRecord, DeferredRecord, JobRecord } from './records.js';
import type { StatusToken } from './status.js';
import { type AttemptFiles, mirrorsAsync, type Store, type StoredState, type SyncStoreOps } from './store.js';

/** What the store holds for one step (every field undefined until written). */
class Entry {
  status: StatusToken | undefined = undefined;
  /** The holder object itself (never its JSON: the text is made only when a lease is read). */
  lease: LeaseHolder | undefined = undefined;
  /**
   * When the lease was last written, epoch ms; undefined while it is the holder's own creation
   * time (`timestamp`, epoch s): no clock read and no number kept per lease.
   */
  leaseMtimeMs: number | undefined = undefined;
  job: JobRecord | undefined = undefined;
  #record: ArtifactRecord | undefined = undefined;
  /** A record committed deferred, not built yet (then `#record` is undefined). */
  #deferred: DeferredRecord | undefined = undefined;

  /** The record (built now when it was committed deferred and this is its first read). */
  get record(): ArtifactRecord | undefined {
    const d = this.#deferred;
    if (d !== undefined) {
      this.#record = d.build();
      this.#deferred = undefined;
    }
    return this.#record;
  }

  set record(record: ArtifactRecord | undefined) {
    this.#record = record;
    this.#deferred = undefined;
  }

  /** Whether a record was committed (without building a deferred one). */
  get hasRecord(): boolean {
    return this.#deferred !== undefined || this.#record !== undefined;
  }

  /** Keeps `record` to build when first read. */
  defer(record: DeferredRecord): void {
    this.#deferred = record;
    this.#record = undefined;
  }
}

/**
 * The entries by path, remembering the last entry found: the runner touches one step's entry
 * several times in a row (prepare → lease → commit → release), and on a large map each lookup
 * by a path string costs a cache miss or two. Every change to the map forgets it.
 */
class Entries extends Map<string, Entry> {
  #lastPath: string | undefined = undefined;
  #lastEntry: Entry | undefined = undefined;

  /** `get`, answered from the last hit when `path` is the same. */
  find(path: string): Entry | undefined {
    if (path === this.#lastPath) return this.#lastEntry;
    const e = super.get(path);
    if (e !== undefined) {
      this.#lastPath = path;
      this.#lastEntry = e;
    }
    return e;
  }

  override set(path: string, entry: Entry): this {
    super.set(path, entry);
    // Set right after a lookup: the step's next operation will ask for it.
    this.#lastPath = path;
    this.#lastEntry = entry;
    return this;
  }

  override delete(path: string): boolean {
    if (path === this.#lastPath) this.#lastPath = this.#lastEntry = undefined;
    return super.delete(path);
  }

  override clear(): void {
    this.#lastPath = this.#lastEntry = undefined;
    super.clear();
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
  readonly entries: Map<string, Entry> = this.#map;

  #entry(path: string): Entry {
    let e = this.#map.find(path);
    if (e === undefined) {
      e = new Entry();
      this.entries.set(path, e);
    }
    return e;
  }

  async readStates(paths: readonly string[], withRecord: readonly boolean[] | boolean): Promise<StoredState[]> {
    return this.readStatesSync(paths, withRecord);
  }

  readStatesSync(paths: readonly string[], withRecord: readonly boolean[] | boolean): StoredState[] {
    const out = new Array<StoredState>(paths.length);
    for (let i = 0; i < paths.length; i++) {
      const e = this.entries.get(paths[i] as string);
      const status = e?.status ?? null;
      const want = typeof withRecord === 'boolean' ? withRecord : withRecord[i] === true;
      if (status === null && (e === undefined || !e.hasRecord || !want)) out[i] = want ? ABSENT_WITH_RECORD : ABSENT;
      else out[i] = want ? { status, record: e?.record ?? null } : { status };
    }
    return out;
  }

  async prepare(path: string): Promise<void> {
    this.#entry(path);
  }

  prepareSync(path: string): boolean {
    if (this.#map.find(path) !== undefined) return false;
    this.#map.set(path, new Entry());
    return true;
  }

  async commit(path: string, status: StatusToken, record?: ArtifactRecord): Promise<void> {
    this.commitSync(path, status, record);
  }

  commitSync(path: string, status: StatusToken, record?: ArtifactRecord): void {
    const e = this.#entry(path);
    if (record !== undefined) e.record = record;
    e.status = status;
  }

  commitDeferredSync(path: string, status: StatusToken, record: DeferredRecord): void {
    // A subclass that overrides commitSync (to observe or alter commits) sees every record.
    if (this.commitSync !== MemoryStore.prototype.commitSync) {
      this.commitSync(path, status, record.build());
      return;
    }
    const e = this.#entry(path);
    e.defer(record);
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
    return this.entries.get(path)?.job ?? null;
  }

  async removeJob(path: string): Promise<void> {
    const e = this.#map.find(path);
    if (e) e.job = undefined;
  }

  attemptFiles(path: string, attempt: number): AttemptFiles {
    return { stdout: `${path}/.cairn/logs/attempt-${attempt}.stdout`, stderr: `${path}/.cairn/logs/attempt-${attempt}.stderr`, dir: `${path}/.cairn/attempt-${attempt}` };
  }
}
