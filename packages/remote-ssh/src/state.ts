/**
 * What the SSH executor knows of each job and each host (types only): the state its parts
 * share and change, out of executor.ts so that its parts can move to modules of their own.
 */
import type { JobHandle, JobRequest, JobStatus } from '@cairn/runner/executor';
import type { HostConnection } from './connection.js';
import type { CodeBundle } from './deploy.js';
import type { SshHostOptions } from './options.js';
import type { Demand, HostSlots } from './placement.js';
import type { OutputListing } from './runtime/protocol.js';
import type { WorkerLink } from './worker-link.js';
import type { RunsIn } from './worker-policy.js';

/** What a job handle records (`JobHandle.info`), so a restarted runner can adopt the job. */
export interface SshJobInfo {
  /** Host name (absent while queued). */
  host?: string;
  /** Remote job directory. */
  jobDir?: string;
  /** Wrapper pid = process group of the job; for a worker step, the worker's pid. */
  pid?: number;
  /** Where the step runs (absent in records of older versions: `detached`). */
  runsIn?: RunsIn;
  /** For a worker step: the worker's directory on the host (its `worker.log` is there). */
  workerDir?: string;
  /** Job dir name under `<workDir>/jobs/` (known from submission on). */
  jobDirName: string;
  /** Step name. */
  step: string;
  /** Local output path (where outputs are staged back when not sharedFs). */
  outputPath: string;
  /** Remote output path. */
  remoteOutputPath?: string;
  /** Local log files. */
  logPaths: { stdout: string; stderr: string };
  /** Reserved resources. */
  cpus: number;
  memoryGb: number;
  gpuIndices: number[];
}

export type Phase = 'queued' | 'launching' | 'running' | 'finishing' | 'done';

export interface Job {
  readonly id: string;
  readonly handle: JobHandle;
  readonly info: SshJobInfo;
  readonly demand: Demand;
  phase: Phase;
  host: HostState | undefined;
  request: JobRequest | undefined;
  stepBundle: CodeBundle | undefined;
  triedHosts: Set<string>;
  cancelRequested: boolean;
  handedOut: boolean;
  pending: JobStatus[];
  /** Where it runs (decided at submit). */
  runsIn: RunsIn;
  /** The worker channel that will report its completion; while it is up the job is not polled. */
  link: WorkerLink | undefined;
  /** Called once when the job ends. */
  onEnd: (() => void)[];
}

/** What a worker's `done` message carried, sparing SFTP reads and the hashing exec. */
export interface Inline {
  readonly result: Uint8Array | null;
  readonly stdout?: Buffer | undefined;
  readonly stderr?: Buffer | undefined;
  readonly out?: OutputListing | undefined;
}

/** A job declared lost while its host was away: stopped when the host answers again. */
export interface Orphan {
  readonly pid: number;
  readonly jobDir: string | undefined;
  readonly runsIn: RunsIn;
}

export interface HostState {
  readonly options: SshHostOptions;
  readonly conn: HostConnection;
  readonly slots: HostSlots;
  /** The absolute work dir, once checked on the host (see `workdir.ts`); empty before. */
  workDir: string;
  /** The work dir check in flight or done (reset when it failed for a passing reason). */
  preparing: Promise<void> | undefined;
  readonly nodePath: string;
  /** First failed contact since the last success. */
  downSince: number | undefined;
  checking: boolean;
  /** Jobs declared lost here: killed when the host comes back. */
  orphans: Orphan[];
  /** Remote dirs to remove, piggybacked on the next status check. */
  cleanup: string[];
  /** The channel to this host's persistent worker (opened on first use). */
  link: WorkerLink | undefined;
  /** When this host's worker steps were last checked by a status exec (see `#tick`). */
  workerCheckedAt: number;
  linking: Promise<WorkerLink> | undefined;
}
