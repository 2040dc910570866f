/**
 * The artifact store contract. Everything is keyed by a step's output path. Implementations:
 * {@link LocalStore} (filesystem, the default) and {@link MemoryStore} (tests, benchmarks).
 */
import type { ArtifactRecord, DeferredRecord, JobRecord } from './records.js';
import type { LeaseHolder, LeaseInfo } from './leases.js';
import type { StatusToken } from './status.js';

/** What the store holds for one step. */
export interface StoredState {
  /** The recorded status, or null when absent or unusable. */
  readonly status: StatusToken | null;
  /** The record, when asked for: null when absent or unusable. */
  readonly record?: ArtifactRecord | null;
  /** Why a status or record that exists could not be used (corrupt, half-written). */
  readonly problem?: string;
}

/** Where one attempt's logs go. */
export interface AttemptFiles {
  /** stdout log file. */
  readonly stdout: string;
  /** stderr log file. */
  readonly stderr: string;
  /** Scratch directory of the attempt (not created by the store). */
  readonly dir: string;
}

/**
 * Optional synchronous operations of a store whose calls are cheap enough to make on the event
 * loop (memory, local disk with `io: 'sync'`). Same semantics as their async counterparts. When a
 * store offers them and a step runs on an executor with `runSync`, the runner runs the whole
 * lease → run → commit → release of that step without a promise.
 */
export interface SyncStoreOps {
  /** {@link Store.readStates}, synchronously. */
  readStatesSync(paths: readonly string[], withRecord: readonly boolean[] | boolean): StoredState[];
  /** {@link Store.prepare}, synchronously; true when this call created the step's directory (so nothing else could have written in it). */
  prepareSync(path: string): boolean;
  /** {@link Store.createLease}, synchronously. */
  createLeaseSync(path: string, holder: LeaseHolder): boolean;
  /** {@link Store.commit}, synchronously. */
  commitSync(path: string, status: StatusToken, record?: ArtifactRecord): void;
  /** {@link Store.removeLease}, synchronously. */
  removeLeaseSync(path: string): void;
  /**
   * Optional: {@link commitSync} for a store that keeps record objects in memory. It may keep
   * `record` and build it only when the record is read; reads must return what `record.build()`
   * returns. The runner calls it instead of `commitSync` whenever it writes a record on the
   * synchronous path. A store that serialises records should not offer it.
   */
  commitDeferredSync?(path: string, status: StatusToken, record: DeferredRecord): void;
}

/** An artifact store. */
export interface Store {
  /** Synchronous operations, when the store offers them (undefined otherwise). */
  readonly sync?: SyncStoreOps | undefined;
  /** Implementation name (`local`, `memory`). */
  readonly kind: string;
  /**
   * Optional hint: a run is about to read and write up to `steps` steps it may not have seen.
   * A store with in-memory tables sizes them once instead of growing them step by step.
   */
  reserve?(steps: number): void;
  /** Reads many steps' states at once; `withRecord[i]` also reads the record of `paths[i]`. Never throws for corrupt files. */
  readStates(paths: readonly string[], withRecord: readonly boolean[] | boolean): Promise<StoredState[]>;
  /** Creates the step's output directory. */
  prepare(path: string): Promise<void>;
  /** Writes the record (if given) and then the status, each atomically: a crash never leaves SUCCESS without its record. */
  commit(path: string, status: StatusToken, record?: ArtifactRecord): Promise<void>;
  /** Creates the lease atomically; false when one exists. */
  createLease(path: string, holder: LeaseHolder): Promise<boolean>;
  /** Reads the lease; null when there is none. */
  readLease(path: string): Promise<LeaseInfo | null>;
  /** Replaces the lease atomically (refresh). */
  writeLease(path: string, holder: LeaseHolder): Promise<void>;
  /** Deletes the lease (no error when absent). */
  removeLease(path: string): Promise<void>;
  /** Removes a stale lease if it is still exactly `observed`; true when removed. */
  breakLease(path: string, observed: LeaseInfo): Promise<boolean>;
  /** Records the job in flight (`.cairn/job.json`), atomically. */
  writeJob(path: string, job: JobRecord): Promise<void>;
  /** The job in flight recorded for a step; null when none (or unreadable). */
  readJob(path: string): Promise<JobRecord | null>;
  /** Removes the job in flight (no error when absent). */
  removeJob(path: string): Promise<void>;
  /**
   * Checks, before a run starts, that the store under `prefix` can be written (creating the
   * prefix if needed). Throws `CAIRN_STORE` naming the prefix and the fix. Optional.
   */
  checkWritable?(prefix: string): Promise<void>;
  /** Log files and scratch directory of one attempt. */
  attemptFiles(path: string, attempt: number): AttemptFiles;
}

/** The async methods {@link SyncStoreOps} mirror. */
const MIRRORED = ['readStates', 'prepare', 'commit', 'createLease', 'removeLease'] as const;

/**
 * @internal True when `store` uses `base`'s own async methods that {@link SyncStoreOps} mirror:
 * a subclass overriding one of them (to observe or alter it) gets no sync operations, so the
 * runner always goes through its override.
 */
export function mirrorsAsync(store: Store, base: { prototype: object }): boolean {
  const proto = base.prototype as Record<string, unknown>;
  const self = store as unknown as Record<string, unknown>;
  return MIRRORED.every((m) => self[m] === proto[m]);
}
