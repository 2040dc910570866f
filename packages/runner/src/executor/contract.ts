/**
 * The executor-plugin contract (types only: a plugin imports this file, not the engine).
 *
 * Lifecycle, as in Snakemake's executor interface: `start` once per run → `submit` per
 * attempt → completions reported through `host.report` (event-driven for local executors;
 * remote executors run ONE batched, rate-limited status check for all their active jobs and
 * report from it) → `cancel` (batched) → `stop`. Built-in executors register exactly as
 * third-party ones do.
 */
import type { Resources, StepSpec, TaskPayload } from '@cairn/core';
import type { StepStoreAccess } from '../store/store.js';

/** How reliably an executor can stop a running job. */
export type CancelSupport =
  /** Cannot cancel: the job runs to completion. */
  | 'none'
  /** Tries (e.g. signals a process), without a guarantee. */
  | 'best-effort'
  /** Stops the job and everything it started (process group / scancel). */
  | 'reliable';

/** What an executor can do, declared as data (never probed at run time). */
export interface ExecutorCapabilities {
  /** Jobs run off this host. */
  readonly remote: boolean;
  /** The executor sees the store at the same paths as the runner (shared filesystem). */
  readonly sharedFs: boolean;
  /** The executor ships the step's code to where it runs. */
  readonly deploysCode: boolean;
  /** Whether inline closures can run here (only in the runner's own process). */
  readonly inProcess: boolean;
  /** Cancellation support. */
  readonly cancel: CancelSupport;
  /** The executor can stream a running job's logs. */
  readonly logs: boolean;
  /** A restarted runner can adopt this executor's running jobs (`adopt`). */
  readonly resumable: boolean;
  /** Jobs this executor runs at once; `undefined` = the runner's `maxConcurrent`. */
  readonly maxConcurrency?: number;
  /**
   * The executor hands a step its secrets (`JobRequest.secrets`) without writing them where
   * anyone but the step's user can read them, and never into a task, job script, command line or
   * record. A step that needs a secret is refused before anything runs (`CAIRN_SECRET_UNSAFE`) on
   * an executor that does not declare it. @default false
   */
  readonly secrets?: boolean;
}

/** States of a job, as reported by an executor. */
export type JobState =
  /** Accepted, not yet running (queued on a cluster). */
  | 'queued'
  /** Running. */
  | 'running'
  /** Finished; the step function returned. */
  | 'succeeded'
  /** Finished; the step function threw or the process exited non-zero. */
  | 'failed'
  /** Stopped by a cancel request. */
  | 'cancelled'
  /** The executor lost track of the job (host gone, job vanished): an infrastructure failure. */
  | 'lost';

/** A job's status. Terminal states carry the outcome. */
export interface JobStatus {
  /** The state. */
  readonly state: JobState;
  /** The step's return value (`succeeded`), when it returned one (must be msgpack-encodable). */
  readonly result?: unknown;
  /** The error (`failed`): the original thrown value in-process, else an Error rebuilt from the far side. */
  readonly error?: unknown;
  /** Process exit code, where there is a process. */
  readonly exitCode?: number | null;
  /** A short reason (`TIMEOUT`, `OUT_OF_MEMORY`, `host unreachable`…). */
  readonly reason?: string;
  /** An infrastructure failure (node failure, lost host): retried without spending the step's own retries. */
  readonly infrastructure?: boolean;
  /**
   * The job was preempted, not failed (Slurm `PREEMPTED`/requeue, a spot interruption: a SIGTERM
   * the runner did not send, a step's `preemptionExitCodes`): retried from `preemptionRetries`
   * with backoff, spending neither `retries` nor `infraRetries`. Set it with a non-succeeded
   * state (`failed` or `lost`). An error with code `CAIRN_PREEMPTED` means the same.
   */
  readonly preempted?: boolean;
}

/** True for `succeeded`, `failed`, `cancelled` and `lost`. */
export type TerminalState = Exclude<JobState, 'queued' | 'running'>;

/** What the runner keeps about a submitted job; persisted in the step's record so a restarted runner can adopt it. */
export interface JobHandle {
  /** Unique within the executor. */
  readonly jobId: string;
  /** Executor name. */
  readonly executor: string;
  /** Executor-specific, JSON-serialisable facts (host, pid, job dir, Slurm id…). */
  readonly info: Readonly<Record<string, unknown>>;
}

/** One attempt of one step, handed to `submit`. */
export interface JobRequest {
  /** Unique per attempt: `${nameWithHash}.${attempt}`. */
  readonly jobKey: string;
  /** The spec (in-process executors may call `spec.fn`). */
  readonly spec: StepSpec;
  /**
   * Everything a worker elsewhere needs, as data (encode with `encodeTask`). For a step whose
   * function is an inline closure `task.ref` is the placeholder `{ module: 'inline:', export: name }`;
   * such jobs only go to `inProcess` executors, which call `spec.fn`.
   */
  readonly task: TaskPayload;
  /**
   * Where the attempt writes its output (`task.outputPath`, the step's `OUT` and
   * `ctx.outputPath`): a staging directory beside the final path on the same filesystem, renamed
   * into place by the runner's commit. Write only under it; never record it as the final path.
   */
  readonly outputPath: string;
  /** The step's final output path (what the record says; the output appears there at the commit). The store prefix is the host's (`ExecutorHost.prefix`). */
  readonly finalPath: string;
  /** Resources declared (after defaults). */
  readonly resources: Resources;
  /** Local files for this attempt's stdout/stderr (inside `outputPath`, so they are published with it). */
  readonly logPaths: { readonly stdout: string; readonly stderr: string };
  /** Directory the executor may use for this attempt's own files (task, result); not created by the runner. */
  readonly attemptDir: string;
  /**
   * The step's durable checkpoint directory (`task.checkpointDir`, `ctx.checkpointDir`,
   * `$CAIRN_CHECKPOINT_DIR`): created by the store, never published, kept across attempts and
   * runs until the step succeeds. Absent when the store keeps none.
   */
  readonly checkpointDir?: string | undefined;
  /**
   * Aborted when the step must stop (cancel, timeout, lease loss). The runner owns cancellation:
   * once this aborts it calls {@link Executor.cancel} with the job's handle (at once, or when
   * `submit` resolves), so `cancel` is how an executor stops a job and it need not watch this.
   * An in-process executor hands it to the step; a batching executor may read it to skip a job
   * not yet submitted.
   */
  readonly signal: AbortSignal;
  /**
   * The store's step access (`ctx.store`, `ctx.localInput`) for a step run in this process;
   * undefined on filesystem stores. Workers elsewhere build it from `task.storeAccess`.
   */
  readonly storeAccess?: StepStoreAccess | undefined;
  /**
   * The values of the secrets the step declares (`secret('NAME')`), by name, resolved by the
   * runner; undefined when it declares none. Never write them anywhere (task files, job scripts,
   * command lines, records): hand them to the step in memory or through its process's
   * environment, as the built-in executors do (`CAIRN_SECRET_<NAME>` for `process`).
   */
  readonly secrets?: Readonly<Record<string, string>> | undefined;
}

/** What the runner offers an executor. */
export interface ExecutorHost {
  /** Report a status change of a job (terminal states end the attempt). Safe to call more than once. */
  report(jobId: string, status: JobStatus): void;
  /** Store prefix of this run. */
  readonly prefix: string;
  /** The runner's logger. */
  readonly logger: { info(msg: string): void; warn(msg: string): void; error(msg: string): void };
  /** The executor client steps can use to submit work (forwarded into step contexts). */
  readonly client: unknown;
}

/** An executor plugin. */
export interface Executor {
  /** Registry name (`inline`, `threads`, `process`, `ssh`, `slurm`…). */
  readonly name: string;
  /** Capabilities, as data. */
  readonly capabilities: ExecutorCapabilities;
  /** Called once before the first submit of a run. */
  start(host: ExecutorHost): Promise<void>;
  /** Starts one attempt. Resolves once the job is accepted (not when it finishes). */
  submit(job: JobRequest): Promise<JobHandle>;
  /** One batched status check for the given jobs (used on adoption and by `cairn status`). */
  poll(handles: readonly JobHandle[]): Promise<Map<string, JobStatus>>;
  /**
   * Cancels jobs (batched): how they stop. The runner decides when (a job's signal aborted:
   * cancel, timeout, lease loss) and calls this once per job.
   */
  cancel(handles: readonly JobHandle[]): Promise<void>;
  /** Streams a job's log lines; `follow` keeps streaming until the job ends. */
  logs?(handle: JobHandle, options: { follow: boolean; signal?: AbortSignal }): AsyncIterable<string>;
  /**
   * Optional, for `inProcess` executors only: runs one attempt on the caller's stack instead of
   * `submit`. Returns the terminal status when the step finished synchronously (its function
   * returned a non-promise, or threw), else a promise of it (never rejected). No `host.report` is
   * sent for such a job; its handle is `{ jobId: job.jobKey, executor: name, info: {} }`. The
   * runner calls it inside the client's async context, only after `start`, and only for attempts
   * without a timeout; it may call `submit` instead at any time.
   */
  runSync?(job: JobRequest): JobStatus | Promise<JobStatus>;
  /** Re-attaches to a job recorded by an earlier runner; `null` when it is gone. Reports through `host` as usual. */
  adopt?(handle: JobHandle): Promise<JobHandle | null>;
  /** Releases everything (connections, pools, timers). Nothing may keep the process alive afterwards. */
  stop(): Promise<void>;
}

/** Creates an executor from options: how plugins register. */
export interface ExecutorFactory<O = unknown> {
  /** Registry name. */
  readonly name: string;
  /** Builds the executor. */
  create(options: O): Executor;
}
