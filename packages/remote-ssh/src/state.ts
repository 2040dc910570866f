/**
 * What the SSH executor knows of each job and each host (types only): the mutable state its
 * modules share through one `Fleet` (fleet.ts); what a job's handle records (`SshJobInfo`) is
 * part of the executor's contract, in executor.ts. A job's `phase` says which module has it:
 * `queued` (admission.ts), `launching` (launch.ts), `running` (status.ts, cancel.ts,
 * host-worker.ts), `finishing` (finish.ts), `done` (ended, once, by `Fleet.end`). A host's
 * `downSince` and `orphans` are kept by hosts.ts and status.ts, its `link` by host-worker.ts.
 */
import type { JobHandle, JobRequest, JobStatus } from '@cairn/runner/executor';
import type { HostConnection } from './connection.js';
import type { CodeBundle } from './deploy.js';
import type { SshJobInfo } from './executor.js';
import type { SshHostOptions } from './options.js';
import type { Demand, HostSlots } from './placement.js';
import type { OutputListing } from './runtime/protocol.js';
import type { WorkerLink } from './worker-link.js';
import type { RunsIn } from './worker-policy.js';

/** Where a job is in its life on this executor (see the header). */
export type Phase = 'queued' | 'launching' | 'running' | 'finishing' | 'done';

/** One job this executor tracks, from submit (or adopt) until it ends. */
export interface Job {
  /** The job id (the runner's job key). */
  readonly id: string;
  /** What `submit`/`adopt` hand back; its `info` is `info` below. */
  readonly handle: JobHandle;
  readonly info: SshJobInfo;
  /** What it takes of its host's slots while placed. */
  readonly demand: Demand;
  phase: Phase;
  /** The host it is placed on (undefined while queued). */
  host: HostState | undefined;
  /** The runner's request (undefined for an adopted job: it is never launched again). */
  request: JobRequest | undefined;
  /** The step's bundle, made at submit (undefined for an adopted job). */
  stepBundle: CodeBundle | undefined;
  /** Hosts whose launch of it failed: not tried again for this submission. */
  triedHosts: Set<string>;
  cancelRequested: boolean;
  /** True once `submit`/`adopt` returned the handle: statuses are reported from then on. */
  handedOut: boolean;
  /** Statuses held until the handle is handed out. */
  pending: JobStatus[];
  /** Where it runs (decided at submit). */
  runsIn: RunsIn;
  /** The worker channel that will report its completion; while it is up the job is not polled. */
  link: WorkerLink | undefined;
  /** Called once when the job ends. */
  onEnd: (() => void)[];
  /** How much of the remote logs is in the local log files (streamed by the status checks). */
  logs: LogOffsets;
  /** When it started running here (launched or adopted); 0 before. */
  runningSince: number;
  /** A cancel under way (its TERM sent, or being sent): a second cancel joins it. */
  killing: Promise<void> | undefined;
}

/** Bytes of a job's remote logs already appended to its local log files, and the appends in flight. */
export interface LogOffsets {
  stdout: number;
  stderr: number;
  /** The appends in flight, chained in order; never rejects. */
  writing: Promise<void>;
}

/** What a worker's `done` message carried, sparing SFTP reads and the hashing exec. */
export interface Inline {
  readonly result: Uint8Array | null;
  /** What the step used, as the persistent worker measured it (`usage.json`). */
  readonly usage?: Readonly<Record<string, unknown>> | undefined;
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

/** One host this executor places jobs on. */
export interface HostState {
  readonly options: SshHostOptions;
  readonly conn: HostConnection;
  readonly slots: HostSlots;
  /** The absolute work dir, once checked on the host (see `workdir.ts`); empty before. */
  workDir: string;
  /** The work dir check in flight or done (reset when it failed for a passing reason). */
  preparing: Promise<void> | undefined;
  /** Node on the host (`nodePath` option, default `node`). */
  readonly nodePath: string;
  /** First failed contact since the last success. */
  downSince: number | undefined;
  /** A status check of this host is in flight (one at a time). */
  checking: boolean;
  /** Jobs declared lost here: killed when the host comes back. */
  orphans: Orphan[];
  /** Remote dirs to remove, piggybacked on the next status check. */
  cleanup: string[];
  /** The channel to this host's persistent worker (opened on first use). */
  link: WorkerLink | undefined;
  /** When this host's worker steps were last checked by a status exec (see `tick` in status.ts). */
  workerCheckedAt: number;
  /** The worker channel being opened (one attempt at a time). */
  linking: Promise<WorkerLink> | undefined;
}
