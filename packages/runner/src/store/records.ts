/**
 * The `.artifact.json` record: what a step was, what it returned and how it ran. Field names
 * follow Marin's `ArtifactRecord` where one exists.
 */
import type { JobHandle } from '../executor/contract.js';
import type { Provenance } from '@cairn/core';
import type { StatusToken } from './status.js';
import type { StagedAttempt } from './store.js';
import type { AttemptEnd } from '../states.js';

/** File name of the record inside a step's output directory. */
export const RECORD_FILE = '.artifact.json';

/**
 * A job in flight: written once a resumable executor accepted an attempt, removed when the step
 * is committed. A runner that takes over a dead runner's lease adopts the job from it instead of
 * submitting again, and commits the staged attempt the job writes into.
 */
export interface JobRecord {
  /** Format version. */
  readonly cairn: 1;
  /** Registry key of the executor that runs the job. */
  readonly executor: string;
  /** The executor's handle (job id, host, job dir, pid, Slurm id…). */
  readonly job: JobHandle;
  /** Attempt number of the job. */
  readonly attempt: number;
  /** Epoch ms the attempt was submitted. */
  readonly start: number;
  /** Epoch ms the step's first attempt of that run started. */
  readonly firstStart: number;
  /** Earlier attempts of that run. */
  readonly attempts: readonly AttemptRecord[];
  /** Host of the runner that submitted the job. */
  readonly host: string;
  /** The run that submitted the job. */
  readonly runId: string;
  /** Where the job writes its output (committed by whichever runner sees the job end). */
  readonly staged?: StagedAttempt;
}

/** One attempt of a step. */
export interface AttemptRecord {
  /** 1-based attempt number. */
  readonly attempt: number;
  /** Epoch ms the attempt was submitted. */
  readonly start: number;
  /** Epoch ms it ended. */
  readonly end: number;
  /** How it ended (`preempted`: retried from `preemptionRetries`; see states.ts `ATTEMPT_ENDS`). */
  readonly state: AttemptEnd;
  /** The error, as data. */
  readonly error?: ErrorData;
  /** Executor name. */
  readonly executor: string;
  /** The executor's job id. */
  readonly jobId?: string;
  /** Host of the runner that ran the attempt. */
  readonly host: string;
  /** The job was started by an earlier runner and adopted by this one (from `.cairn/job.json`). */
  readonly adopted?: boolean;
}

/** An error as plain data. */
export interface ErrorData {
  /** Class name. */
  readonly name: string;
  /** Message. */
  readonly message: string;
  /** A CairnError code, when there is one. */
  readonly code?: string;
  /** Stack trace. */
  readonly stack?: string;
  /** The error's `cause`, recorded the same way (at most 8 deep). */
  readonly cause?: ErrorData;
}

/** The artifact record (format `cairn: 1`). */
export interface ArtifactRecord {
  /** Record format version. */
  readonly cairn: 1;
  /** Step name. */
  readonly name: string;
  /** Step identity. */
  readonly nameWithHash: string;
  /** Artifact version (lazy steps). */
  readonly version?: string;
  /** Config fingerprint (lazy steps). */
  readonly fingerprint?: string;
  /** The fingerprinted canonical text (drift diagnostics). */
  readonly fingerprintPayload?: string;
  /** Output location. */
  readonly outputPath: string;
  /** Resolved inputs (apply steps) or `hashAttrs` (path steps). */
  readonly config: unknown;
  /** Dependencies: `name@version` for lazy steps, `nameWithHash` otherwise. */
  readonly deps: readonly string[];
  /** Dependencies' output paths. */
  readonly depPaths: readonly string[];
  /** Dependencies' identities (`nameWithHash`), in `deps` order: what drift reports name (absent in records before 0.2). */
  readonly depIdentities?: readonly string[];
  /** Runtime arguments the step received (never part of its identity; `config` holds the rest). */
  readonly runtime?: Readonly<Record<string, unknown>>;
  /** The status written with this record. */
  readonly status: StatusToken;
  /** The step's returned value (JSON). */
  readonly result?: unknown;
  /** The artifact kind's name (`apply({ artifact })`), when the step has one: it is loaded only as that kind. */
  readonly artifact?: string;
  /** An adopted artifact's source (`adopt()`): where its data is; nothing was written there. */
  readonly source?: string;
  /** The final error (FAILED / CANCELLED). */
  readonly error?: ErrorData;
  /** Where the plan was made. */
  readonly provenance?: Provenance;
  /** Every attempt of the last run that ran the step. */
  readonly attempts: readonly AttemptRecord[];
  /** Wall-clock timings (epoch ms). */
  readonly timings: { readonly start: number; readonly end: number; readonly durationMs: number };
  /** Executor of the last attempt. */
  readonly executor: string;
  /** The executor's job handle of the last attempt. */
  readonly job?: JobHandle;
  /** The run that wrote the record. */
  readonly runId: string;
}

/**
 * A record described by what it is made of and built on demand: a store that keeps records in
 * memory may hold this and call `build()` when the record is first read (see
 * `SyncStoreOps.commitDeferredSync`). `build()` returns equal records every call.
 */
export interface DeferredRecord {
  /** Builds the record. */
  build(): ArtifactRecord;
}

/** An error as plain data (never throws). */
export function errorData(error: unknown, depth = 0): ErrorData {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    const cause = (error as { cause?: unknown }).cause;
    return {
      name: error.name,
      message: error.message,
      ...(typeof code === 'string' ? { code } : {}),
      ...(error.stack ? { stack: error.stack } : {}),
      ...(cause !== undefined && depth < 8 ? { cause: errorData(cause, depth + 1) } : {}),
    };
  }
  return { name: 'Error', message: String(error) };
}

/** Parses record text; `problem` says why it is unusable. */
export function parseRecord(text: string): { record: ArtifactRecord | null; problem?: string } {
  try {
    const v = JSON.parse(text) as Partial<ArtifactRecord> | null;
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return { record: null, problem: 'the record is not a JSON object' };
    return { record: v as ArtifactRecord };
  } catch {
    return { record: null, problem: 'the record is not valid JSON (half-written?)' };
  }
}

/** Parses `.cairn/job.json` text; null when it is not a job record. */
export function parseJobRecord(text: string): JobRecord | null {
  try {
    const v = JSON.parse(text) as Partial<JobRecord> | null;
    if (typeof v !== 'object' || v === null || typeof v.executor !== 'string' || typeof v.job?.jobId !== 'string' || typeof v.attempt !== 'number') return null;
    return v as JobRecord;
  } catch {
    return null;
  }
}
