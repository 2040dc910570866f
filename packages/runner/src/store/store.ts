/**
 * The artifact store contract. Everything is keyed by a step's output path. Implementations:
 * {@link LocalStore} (filesystem, the default) and {@link MemoryStore} (tests, benchmarks).
 */
import type { ArtifactRecord, JobRecord } from './records.js';
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

/** An artifact store. */
export interface Store {
  /** Implementation name (`local`, `memory`). */
  readonly kind: string;
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
  /** Log files and scratch directory of one attempt. */
  attemptFiles(path: string, attempt: number): AttemptFiles;
}
