/**
 * Where the local store keeps what it knows of a step. Inside the step's output directory
 * `{path}` (published whole by the commit, so Marin's readers understand it):
 *
 * ```
 * {path}/.executor_status                one token: SUCCESS | FAILED | DEP_FAILED | CANCELLED (Marin's format)
 * {path}/.artifact.json                  the record (JSON), written before the status
 * {path}/.cairn/logs/attempt-N.{stdout,stderr}
 * ```
 *
 * Beside it, in the same parent directory (so a rename moves an attempt into place, and a lease
 * outlives the output directory being replaced):
 *
 * ```
 * {parent}/.{base}.cairn-lease                     the lease, while a runner works on the step
 * {parent}/.{base}.cairn-job.json                  the job in flight of a resumable executor
 * {parent}/.{base}.cairn-attempt-{runId}-{N}/      attempt N's output while it runs (its OUT)
 * {parent}/.{base}.cairn-old-{runId}/              an earlier output, moved aside during a commit
 * {parent}/.{base}.cairn-checkpoints/gen-{G}/       the step's checkpoints (`ctx.checkpointDir`), generation G
 * ```
 *
 * The checkpoint directory is never inside the output (never published, never read as one, and
 * Marin never sees it); it outlives attempts and runs until the step's SUCCESS commit removes it
 * (unless the step keeps it). Each run that takes the step starts a new generation (commit-ops.ts).
 */
import { CairnError } from '@cairn/core';
import { RECORD_FILE } from '../records.js';
import { STATUS_FILE } from '../status.js';
import type { StagedAttempt } from '../store.js';
import { attemptFilesIn, logsDirIn } from '../attempt-files.js';

/** The marker in the names of everything the store keeps beside an output directory. */
export const SIBLING_MARK = '.cairn-';

/** A local path for a store path (`file://` URLs allowed); throws for other schemes. */
export function localPath(path: string): string {
  if (path.startsWith('file://')) return new URL(path).pathname;
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(path)) {
    throw new CairnError('CAIRN_STORE', `The local store cannot hold ${path}; use a store for that scheme (register it with the runner), or a filesystem prefix.`);
  }
  return path;
}

/** `{parent}/.{base}`: what every sibling name of the step at `dir` starts with. */
function siblingStem(dir: string): string {
  const slash = dir.lastIndexOf('/');
  return `${dir.slice(0, slash + 1)}.${dir.slice(slash + 1)}`;
}

/** The parent directory of `dir`. */
export function parentOf(dir: string): string {
  const slash = dir.lastIndexOf('/');
  return slash <= 0 ? '/' : dir.slice(0, slash);
}

/** The step's lease file. */
export function leaseFile(dir: string): string {
  return `${siblingStem(dir)}${SIBLING_MARK}lease`;
}

/** Marin's lock inside the output directory (`{"worker_id", "timestamp"}`), honoured as a lease (lease-ops.ts). */
export function marinLockFile(dir: string): string {
  return `${dir}/.executor_status.lock`;
}

/** The step's job-in-flight file. */
export function jobFile(dir: string): string {
  return `${siblingStem(dir)}${SIBLING_MARK}job.json`;
}

/** The name prefix of the step's attempt directories (`…-{runId}-{N}`). */
export function attemptPrefix(dir: string): string {
  return `${siblingStem(dir)}${SIBLING_MARK}attempt-`;
}

/** Attempt `attempt`'s directory of run `runId`. */
export function attemptDir(dir: string, runId: string, attempt: number): string {
  return `${attemptPrefix(dir)}${runId}-${attempt}`;
}

/** The step's checkpoint directory (all its generations). */
export function checkpointRoot(dir: string): string {
  return `${siblingStem(dir)}${SIBLING_MARK}checkpoints`;
}

/** Where an earlier output goes while run `runId` commits. */
export function oldDir(dir: string, runId: string): string {
  return `${siblingStem(dir)}${SIBLING_MARK}old-${runId}`;
}

/** The status file of an output (or staged) directory. */
export function statusFile(dir: string): string {
  return `${dir}/${STATUS_FILE}`;
}

/** The record file of an output (or staged) directory. */
export function recordFile(dir: string): string {
  return `${dir}/${RECORD_FILE}`;
}

/** The logs directory of an output (or staged) directory. */
export const logsDir = logsDirIn;

/** Attempt `attempt`'s staging of the step at `path`, in `dir`. */
export function stagedAt(path: string, dir: string, attempt: number): StagedAttempt {
  const f = attemptFilesIn(dir, attempt);
  return { path, dir, attempt, logs: { stdout: f.stdout, stderr: f.stderr }, scratch: f.scratch };
}

let tmpCounter = 0;

/** A temporary name beside `file`, unique in this process. */
export function tmpName(file: string): string {
  return `${file}.tmp-${process.pid}-${++tmpCounter}`;
}

/** Where the local store keeps a step's files, for tools that read a store directory (the CLI, tests). */
export const localLayout = Object.freeze({
  /** The lease file beside the output directory `path`. */
  leaseFile,
  /** The job-in-flight file beside `path`. */
  jobFile,
  /** The checkpoint directory beside `path` (its generations `gen-N` inside; kept after SUCCESS only by `keepCheckpoints` steps). */
  checkpointRoot,
  /** Attempt `attempt`'s staged directory of run `runId`. */
  attemptDir,
  /** The name prefix of every staged attempt directory of `path`. */
  attemptPrefix,
  /** The status file inside an output directory. */
  statusFile,
  /** The record file inside an output directory. */
  recordFile,
  /** The logs directory inside an output directory. */
  logsDir,
  /** True for a directory entry name the store keeps beside outputs (leases, attempts, job files). */
  isSibling: (name: string): boolean => name.startsWith('.') && name.includes(SIBLING_MARK),
});
