/**
 * An in-memory store with the same semantics as {@link LocalStore}: for tests and for
 * measuring the scheduler without the filesystem. Nothing is shared between processes.
 */
import { type LeaseHolder, type LeaseInfo, parseHolder } from './leases.js';
import type { ArtifactRecord, JobRecord } from './records.js';
import type { StatusToken } from './status.js';
import { type AttemptFiles, mirrorsAsync, type Store, type StoredState, type SyncStoreOps } from './store.js';

interface Entry {
  status?: StatusToken;
  record?: ArtifactRecord;
  /** The holder object itself (never its JSON: the text is made only when a lease is read). */
  lease?: LeaseHolder | undefined;
  /** When the lease was created or last written, epoch ms. */
  leaseMtimeMs?: number;
  job?: JobRecord;
}

/** The state of a step with no status (shared: most reads of a cold run find nothing). */
const ABSENT: StoredState = Object.freeze({ status: null });
const ABSENT_WITH_RECORD: StoredState = Object.freeze({ status: null, record: null });

/** The in-memory store. */
export class MemoryStore implements Store, SyncStoreOps {
  readonly kind = 'memory';
  /** Every operation is synchronous underneath (not offered to a subclass that overrides the async ones). */
  readonly sync: SyncStoreOps | undefined = mirrorsAsync(this, MemoryStore) ? this : undefined;
  /** Entries by output path (inspect in tests). */
  readonly entries = new Map<string, Entry>();

  #entry(path: string): Entry {
    let e = this.entries.get(path);
    if (e === undefined) {
      e = {};
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
      if (status === null && (e?.record === undefined || !want)) out[i] = want ? ABSENT_WITH_RECORD : ABSENT;
      else out[i] = want ? { status, record: e?.record ?? null } : { status };
    }
    return out;
  }

  async prepare(path: string): Promise<void> {
    this.#entry(path);
  }

  prepareSync(path: string): boolean {
    if (this.entries.has(path)) return false;
    this.entries.set(path, {});
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

  async createLease(path: string, holder: LeaseHolder): Promise<boolean> {
    return this.createLeaseSync(path, holder);
  }

  createLeaseSync(path: string, holder: LeaseHolder): boolean {
    const e = this.#entry(path);
    if (e.lease !== undefined) return false;
    e.lease = holder;
    // A fresh holder's timestamp is its creation time (epoch s): no clock read per lease.
    e.leaseMtimeMs = typeof holder.timestamp === 'number' ? holder.timestamp * 1000 : Date.now();
    return true;
  }

  async readLease(path: string): Promise<LeaseInfo | null> {
    const e = this.entries.get(path);
    if (e?.lease === undefined) return null;
    const raw = JSON.stringify(e.lease);
    return { holder: parseHolder(raw), raw, mtimeMs: e.leaseMtimeMs ?? 0 };
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
    const e = this.entries.get(path);
    if (e !== undefined) e.lease = undefined;
  }

  async breakLease(path: string, observed: LeaseInfo): Promise<boolean> {
    const e = this.entries.get(path);
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
    const e = this.entries.get(path);
    if (e) delete e.job;
  }

  attemptFiles(path: string, attempt: number): AttemptFiles {
    return { stdout: `${path}/.cairn/logs/attempt-${attempt}.stdout`, stderr: `${path}/.cairn/logs/attempt-${attempt}.stderr`, dir: `${path}/.cairn/attempt-${attempt}` };
  }
}
