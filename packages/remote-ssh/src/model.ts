/**
 * The SSH executor's model (types only): what it knows of each job and each host, the `Fleet`
 * its modules share (the class is in fleet.ts), and what a job's handle records (`SshJobInfo`,
 * part of the executor's contract). Every module imports these types from here, so the modules
 * do not import each other round in a circle for their types. A job's `phase` says which module has it:
 * `queued` (admission.ts), `launching` (launch.ts), `running` (status.ts, cancel.ts,
 * host-worker.ts), `finishing` (finish.ts), `done` (ended, once, by `Fleet.end`). A host's
 * `downSince` and `orphans` are kept by hosts.ts and status.ts, its `link` by host-worker.ts.
 */
import type { ExecutorHost, JobHandle, JobRequest, JobStatus } from '@cairn/runner/executor';
import type { HostConnection } from './connection.js';
import type { Bundler, CodeBundle, CodeUploader } from './deploy.js';
import type { SshExecutorOptions, SshHostOptions } from './options.js';
import type { Demand, HostSlots } from './placement.js';
import type { OutputListing } from './runtime/protocol.js';
import type { ShellChannel } from './shell-channel.js';
import type { WorkerLink } from './worker-link.js';
import type { RunsIn, WorkerMode } from './worker-policy.js';

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
  /** The host's persistent shell (host-shell.ts), once open. */
  shell: ShellChannel | undefined;
  /** The shell being opened; or, after a failed open, not before this time (epoch ms). */
  shellOpening: Promise<void> | undefined;
  shellRetryAt: number;
}

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
  /**
   * The step's checkpoint directory when it is staged (not `sharedFs`): `local` is the runner's
   * (filled into `remote`, `<jobDir>/checkpoints`, before the program starts; copied back when the
   * attempt ends). Absent with `sharedFs` (the host writes the runner's directory itself) or when
   * the store keeps none.
   */
  checkpoints?: { local: string; remote: string };
  /** Local log files. */
  logPaths: { stdout: string; stderr: string };
  /** For a command step (run by a POSIX shell, no Node on the host): its program and the exit codes that mean it was preempted. Absent for steps run by Node. */
  command?: { program: string; preemptionExitCodes?: number[] };
  /** Reserved resources. */
  cpus: number;
  memoryGb: number;
  gpuIndices: number[];
}

/** The executor's options with their defaults applied. */
export type FleetOptions = Required<Pick<SshExecutorOptions, 'hostKeyVerification' | 'sharedFs' | 'pollIntervalMs' | 'hostTimeoutMs' | 'cancelGraceMs' | 'orphanGraceMs' | 'maxChannels'>>;

/**
 * One SSH executor's shared state and the three calls every module makes (see fleet.ts, which
 * implements it, for the module layout).
 */
export interface Fleet {
  /** The executor's name. */
  readonly name: string;
  /** Options with their defaults applied. */
  readonly opts: FleetOptions;
  /** Every configured host. */
  readonly hosts: HostState[];
  /** Bundles step modules and the worker entry. */
  readonly bundler: Bundler;
  /** Uploads bundles to hosts. */
  readonly uploader: CodeUploader;
  /** Every job not yet ended, by job id. */
  readonly jobs: Map<string, Job>;
  /** Jobs waiting for a host, in submission order. */
  readonly queue: Job[];
  /** Re-runs placement when every host is down, so queued jobs fail instead of waiting forever. */
  downTimer: NodeJS.Timeout | undefined;
  /** The runner's worker entry (bundled for hosts). */
  readonly workerEntry: string;
  /** Where steps run: in a persistent worker, detached, or chosen per step. */
  readonly workerMode: WorkerMode;
  /** A host's idle persistent worker exits after this long. */
  readonly workerIdleMs: number;
  /** The runner, once `start` was called. */
  host: ExecutorHost | undefined;
  /** Control commands under way (cancels: see control.ts); `stop()` waits for them. */
  readonly control: Set<Promise<void>>;
  /** Set by `stop()`: cancels stop waiting for their jobs to end. */
  stopped: boolean;
  /** The runner's logger (warnings as process warnings before `start`). */
  readonly logger: ExecutorHost['logger'];
  /** Places queued jobs that fit (admission.ts). Returns the launches started. */
  pump(): Map<Job, Promise<void>>;
  /** A job's record, submitted (`queued`) or adopted (`running`). */
  newJob(id: string, info: SshJobInfo, demand: Demand, start: Pick<Job, 'phase' | 'host' | 'request' | 'stepBundle' | 'runsIn'>): Job;
  /** Ends a job: frees its slots, reports its terminal status, places waiting jobs. */
  end(j: Job, status: JobStatus): void;
  /** Reports a status (held until the handle is handed out). */
  report(j: Job, status: JobStatus): void;
  /** Hands held statuses to the runner. */
  flush(j: Job): void;
  /** The host a handle names. */
  hostOf(hd: JobHandle): HostState | undefined;
}
