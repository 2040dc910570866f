/**
 * The artifact store contract (types only: a store plugin imports this file, not the engine).
 * Everything is keyed by a step's output path. Implementations: `LocalStore` (a filesystem, the
 * default), `MemoryStore` (tests, benchmarks), `@cairn/store-s3` (object stores).
 *
 * Every operation may finish synchronously or return a promise ({@link Maybe}): a store whose
 * calls are cheap (memory, a local disk) answers at once and the runner finishes a step on its
 * own stack; a network store returns promises. Callers handle both.
 *
 * The protocol the runner follows for one step (README "Leases" and "Commits"):
 * `createLease` (or `breakLease` + `createLease` over a stale one) → re-read the state under the
 * lease → `stage` per attempt → `commit` (fenced: the store checks the lease is still ours
 * immediately before it publishes, and publishes nothing otherwise) → `releaseLease` (only ours).
 */
import type { ArtifactRecord, DeferredRecord, JobRecord } from './records.js';
import type { RecordHead } from './record-head.js';
import type { LeaseHolder, LeaseInfo } from './leases.js';
import type { StatusToken } from './status.js';
import type { StoreMarker } from './marker.js';
import type { TaskStoreAccess } from '@cairn/core';
import type { Maybe } from '../maybe.js';

export type { Maybe };


/** How much of a record `readStates` reads: none, the identity fields (`'head'`, see record-head.ts), or all of it. */
export type RecordWant = boolean | 'head';

/** What the store holds for one step. */
export interface StoredState {
  /** The recorded status, or null when absent or unusable. */
  readonly status: StatusToken | null;
  /** The record, when asked for: null when absent or unusable. */
  readonly record?: ArtifactRecord | null;
  /** The record's identity fields, when only they were asked for (`'head'`) and the store read just those: null when absent or unusable. */
  readonly head?: RecordHead | null;
  /** Why a status or record that exists could not be used (corrupt, half-written). */
  readonly problem?: string;
}

/** Where one attempt of a step writes while it runs. Plain data: it travels in job records. */
export interface StagedAttempt {
  /** The step's output path, where the attempt's output is published at the commit. */
  readonly path: string;
  /**
   * Where the attempt writes: the step's `OUT` and `ctx.outputPath`. A directory beside `path`
   * on the same filesystem, renamed into place by the commit (`capabilities.staging: 'rename'`),
   * or `path` itself for a store that cannot stage (`'none'`).
   */
  readonly dir: string;
  /** 1-based attempt number. */
  readonly attempt: number;
  /** The attempt's log files (under `dir`, so they are published with the output). */
  readonly logs: { readonly stdout: string; readonly stderr: string };
  /** A directory for the executor's own files of this attempt (task, result); not created by the store. */
  readonly scratch: string;
  /**
   * The step's durable checkpoint directory for this attempt (`ctx.checkpointDir`), once opened:
   * by `stage` (a retry reusing its run's) or by {@link Store.openCheckpoints} when the step first
   * asks for it. It is never published and outlives attempts and runs until the step succeeds.
   * Absent: not opened yet, or a store without checkpoints. See the runner README, "Commits and
   * leases", for its fencing.
   */
  readonly checkpoints?: string;
}

/** Log files of one attempt of a step, committed or running. */
export interface AttemptLogs {
  /** 1-based attempt number. */
  readonly attempt: number;
  /** stdout log file. */
  readonly stdout: string;
  /** stderr log file. */
  readonly stderr: string;
  /** Whether the attempt is still staged (running, or left by a dead runner) rather than committed. */
  readonly running: boolean;
}

/** What a store can do, as data. */
export interface StoreCapabilities {
  /**
   * How an attempt's output reaches its output path. `rename`: the attempt writes into its own
   * directory beside the path, renamed into place by the commit, so a zombie attempt can never
   * change a committed output and a half-written output is never at the path. `upload`: the
   * attempt writes into a local directory uploaded by the commit, once the lease is confirmed
   * (object stores). `none`: the attempt writes at the path itself (MemoryStore: nothing is on
   * disk to protect).
   */
  readonly staging: 'rename' | 'upload' | 'none';
  /**
   * What the store holds outlives this process (`false`: MemoryStore). A runner journals its
   * runs by default only into a durable store: a journal kept in memory has no other reader, and
   * writing it would cost an in-memory run more than its own scheduling. @default true
   */
  readonly durable?: boolean;
}

/** What one commit publishes. */
export interface CommitRequest {
  /** The status, written last: the commit point. */
  readonly status: StatusToken;
  /** The record, written before the status. A store that keeps records in memory may keep this and build it when first read. */
  readonly record?: DeferredRecord | undefined;
  /** The attempt whose output is published with the status. Absent: the status (and record) are written at the path in place, keeping what is there (DEP_FAILED). */
  readonly staged?: StagedAttempt | undefined;
  /** Also release the lease once published: the fence's check stands for the release's (one read fewer per step). */
  readonly release?: boolean | undefined;
  /** With a SUCCESS: keep the step's checkpoint directory (the step's `keepCheckpoints`); else the commit removes it once published (also one this run never opened). */
  readonly keepCheckpoints?: boolean | undefined;
}

/**
 * What a running step gets from a store whose outputs are not local files, besides its output
 * directory: `ctx.store` and what `ctx.localInput` fetches with.
 */
export interface StepStoreAccess {
  /** `ctx.store`: the store's handle for direct writes to the step's final output location (its shape is the store's). */
  readonly store: unknown;
  /** A local directory holding the output at `depPath` (a dependency's final output path), fetched once per host. */
  localInput(depPath: string): Promise<string>;
}

/** How a worker in another thread, process or host builds a step's {@link StepStoreAccess}: plain data, no secret. */
export type StepAccessRef = Omit<TaskStoreAccess, 'path'>;

/** One step a {@link StoreBrowser} found. */
export interface FoundStep {
  /** The step's output path. */
  readonly path: string;
  /** A lease object or file exists for it (read it with `readLease`). */
  readonly leased: boolean;
}

/** One file a {@link StoreBrowser} lists. */
export interface ListedFile {
  /** Its full path (or URL). */
  readonly path: string;
  /** Last modified, epoch ms. */
  readonly lastModified: number;
}

/** What a step's checkpoint directory holds (`ctx.checkpointDir`), as tools show it. */
export interface CheckpointSummary {
  /** The directory of all its generations (what `cairn clean` removes with the output). */
  readonly root: string;
  /** The current generation (the highest `gen-N`); 0 when none is complete yet. */
  readonly generation: number;
  /** Files in the current generation, recursively. */
  readonly files: number;
  /** Their total size in bytes. */
  readonly bytes: number;
}

/** An attempt directory or an aside output a dead run left beside an output path (stores that stage beside outputs). */
export interface Leftover {
  /** The directory. */
  readonly path: string;
  /** The output path it belongs to. */
  readonly step: string;
}

/**
 * How tools (the CLI's status, logs, explain, clean, unlock, report, ui) find and read what a
 * store holds, wherever its files are: the CLI reads stores through this and the {@link Store}
 * methods only, never around them. The local, memory and S3 stores implement it.
 */
export interface StoreBrowser {
  /** The steps under `prefix`, by output path (sorted): directories holding a status, a record, a lease or attempt logs, at most `maxDepth` levels below it, outside `{prefix}/.cairn`. */
  findSteps(prefix: string, maxDepth: number): Promise<readonly FoundStep[]>;
  /** The files under `dir`, recursively (empty when none). */
  listFiles(dir: string): Promise<readonly ListedFile[]>;
  /** One file's bytes; null when absent. */
  readFile(path: string): Promise<Uint8Array | null>;
  /** Writes one whole file (a run journal). */
  writeFile(path: string, data: string | Uint8Array): Promise<void>;
  /**
   * Optional: appends to a file, creating it (and its directory) when absent: how a run journal
   * grows on a store that can append. Without it the journal is rewritten whole with `writeFile`.
   */
  appendFile?(path: string, data: string | Uint8Array): Promise<void>;
  /** Removes a step: everything under its output path (outputs, status, record, logs, its lease); or one leftover directory. */
  remove(path: string): Promise<void>;
  /** Optional: attempt directories and aside outputs dead runs left under `prefix` (stores that stage beside outputs); none when absent. */
  findLeftovers?(prefix: string, maxDepth: number): Promise<readonly Leftover[]>;
  /** Optional: the checkpoint directory of the step at `path` (stores that keep one); null when it has none. */
  checkpoints?(path: string): Promise<CheckpointSummary | null>;
}

/**
 * Makes the store for prefixes of some URL schemes: how store plugins register
 * (`new StepRunner({ stores: [s3StoreFactory()] })`), as executors do. The built-in local store
 * serves `file://` and plain paths (scheme `file`); a factory for a scheme replaces it.
 */
export interface StoreFactory<O = unknown> {
  /** Registry name (`local`, `s3`): `storeOptions` are keyed by it. */
  readonly name: string;
  /** URL schemes served, lower-case, without `://` (`['s3']`). `file` also serves plain paths. */
  readonly schemes: readonly string[];
  /** Builds the store (once per runner, when a prefix of one of its schemes is first used). */
  create(options: O | undefined, prefix: string): Store;
}

/** An artifact store. */
export interface Store {
  /** Implementation name (`local`, `memory`, `s3`). */
  readonly kind: string;
  /** Capabilities, as data. */
  readonly capabilities: StoreCapabilities;
  /** Optional hint: a run is about to touch up to `steps` steps it may not have seen (a store with in-memory tables sizes them once). */
  reserve?(steps: number): void;
  /**
   * Reads many steps' states at once; `withRecord[i]` also reads the record of `paths[i]`:
   * `true` the whole record, `'head'` at least its identity fields (a store may read them
   * without parsing the record, into `head`, or return the whole record). Never throws for
   * corrupt files.
   */
  readStates(paths: readonly string[], withRecord: readonly RecordWant[] | RecordWant): Maybe<StoredState[]>;
  /**
   * Optional: the names of the entries directly under `dir` (one level, not Cairn's hidden
   * files; empty when `dir` does not exist). The runner looks beside a step for earlier builds of
   * it under other identities (`plan`'s reasons, outputs of an older layout); without it, it does not.
   */
  list?(dir: string): Maybe<readonly string[]>;
  /**
   * Optional: checks, writing nothing, that the store under `prefix` can be read (an endpoint
   * that answers, credentials that work, a bucket that exists), throwing one `CAIRN_STORE` that
   * names the prefix and the fix. Called once per run and dry run, before anything is read.
   */
  connect?(prefix: string): Maybe<void>;
  /**
   * Throws `CAIRN_STORE` (naming the prefix and the fix) when nothing can be written under
   * `prefix`. Called once per run, only when a step must be written, before anything runs; it
   * may create the prefix. A run that only reads never calls it.
   */
  checkWritable(prefix: string): Maybe<void>;
  /**
   * Optional: writes the store marker under `prefix` when it is absent (marker.ts: what tells
   * `cairn clean` that a directory is a Cairn store). Called once per run, right after
   * `checkWritable`; a store without it is never marked, and tools then judge it by its records.
   */
  markStore?(prefix: string): Maybe<void>;
  /** Optional, with `markStore`: the marker under `prefix`; null when there is none. */
  readMarker?(prefix: string): Maybe<StoreMarker | null>;
  /** Creates the lease atomically with `holder`'s content already in it (never an empty lease); false when one exists. */
  createLease(path: string, holder: LeaseHolder): Maybe<boolean>;
  /** Reads the lease; null when there is none. */
  readLease(path: string): Maybe<LeaseInfo | null>;
  /** Rewrites the lease with `holder`'s current content if it is still `holder`'s; false when it is not (lost). */
  refreshLease(path: string, holder: LeaseHolder): Maybe<boolean>;
  /** Removes a stale lease if it is still exactly `observed`; true when removed (two takers cannot both win). */
  breakLease(path: string, observed: LeaseInfo): Maybe<boolean>;
  /** Removes the lease if it is still `holder`'s; never removes another holder's lease. */
  releaseLease(path: string, holder: LeaseHolder): Maybe<void>;
  /**
   * Prepares where attempt `attempt` writes. `previous`: the attempt before it in this run,
   * whose logs are carried over and whose staged output is dropped. A store with checkpoint
   * directories reuses `previous.checkpoints`. Without them (a run's first attempt of the step,
   * or a retry of attempts that never asked), a store with {@link openCheckpoints} leaves
   * `checkpoints` absent, to be opened when the step first asks; a store without it that keeps
   * checkpoints opens them here, as `openCheckpoints` would.
   */
  stage(path: string, holder: LeaseHolder, attempt: number, previous?: StagedAttempt): Maybe<StagedAttempt>;
  /**
   * Optional: opens the step's checkpoint directory for `staged` (staged without one) when the
   * step first asks for it (`ctx.checkpointDir`, a command's `$CAIRN_CHECKPOINT_DIR`, a task
   * sent to a worker): starts a new checkpoint generation, seeded with the complete checkpoints
   * of the last one, only while the lease is still `holder`'s (`CAIRN_LEASE_LOST` otherwise);
   * one it cannot create is `CAIRN_CHECKPOINT`. Synchronous: the step's getter waits for it.
   */
  openCheckpoints?(staged: StagedAttempt, holder: LeaseHolder): string;
  /**
   * Publishes `request` — record, then status, with the staged output — only while the lease is
   * `holder`'s: it checks the lease immediately before publishing, and throws
   * `CAIRN_LEASE_LOST` having published nothing when it is not. Does not release the lease.
   */
  commit(path: string, holder: LeaseHolder, request: CommitRequest): Maybe<void>;
  /** Drops a staged attempt that will not be committed (its lease was lost), never touching the output path. */
  abandon(staged: StagedAttempt): Maybe<void>;
  /** Removes what dead attempts of other runs left beside `path` (called after taking a stale lease over), except `keep`. */
  sweep(path: string, keep?: StagedAttempt): Maybe<void>;
  /** Records the job in flight of a resumable executor, atomically. */
  writeJob(path: string, job: JobRecord): Maybe<void>;
  /** The job in flight recorded for a step; null when none (or unreadable). */
  readJob(path: string): Maybe<JobRecord | null>;
  /** Removes the job in flight (no error when absent). */
  removeJob(path: string): Maybe<void>;
  /** The log files of a step's attempts: the committed ones and any still staged, oldest first. */
  attemptLogs(path: string): Maybe<readonly AttemptLogs[]>;
  /**
   * Optional (object stores): `ctx.store` and `ctx.localInput` of a step writing to `path`, for
   * steps running in the runner's process. Filesystem stores have none: their paths are local.
   */
  stepAccess?(path: string): StepStoreAccess;
  /** Optional, with `stepAccess`: how workers elsewhere build the same (re-imported there; see {@link StepAccessRef}). */
  readonly stepAccessRef?: StepAccessRef;
  /** How tools find and read what the store holds (see {@link StoreBrowser}); a store without one cannot be used by the CLI. */
  readonly browse?: StoreBrowser;
}
