/**
 * The contract between the grid core and one batch scheduler (types only). An adapter
 * (`@cairn/remote-slurm`, `@cairn/remote-sge`) says how to submit a script, how to ask for the
 * state of many jobs at once, how to cancel many at once, and what each of its states means;
 * the core does everything else (wrapper, packing, polling, adoption, the status decision).
 */
import type { Resources } from '@cairn/core';

/**
 * What a scheduler state means for a job, the one table every adapter fills in
 * (Slurm: `states.ts` of remote-slurm; Grid Engine: `states.ts` of remote-sge).
 */
export type StateClass =
  /** Waiting to start (`PENDING`, `qw`, held). */
  | 'queued'
  /** Started, or stopping (`RUNNING`, `COMPLETING`, `r`, `t`, `dr`, suspended). */
  | 'running'
  /** Ended on its own with exit code 0 (the exit-code file says how the step ended). */
  | 'completed'
  /** Ended on its own with a non-zero exit code. */
  | 'failed'
  /** Stopped by the scheduler for a reason that is the step's own (`TIMEOUT`, `OUT_OF_MEMORY`, `CANCELLED`): `reason` says which. */
  | 'killed'
  /** Node or scheduler trouble, not the step's fault (`NODE_FAIL`, `BOOT_FAIL`): retried from `infraRetries`, without spending the step's retries. */
  | 'infrastructure'
  /** The scheduler took the job's resources for other work (Slurm `PREEMPTED`): retried from `preemptionRetries`, resuming from its checkpoints. */
  | 'preempted'
  /** The scheduler will not run it without an admin (Grid Engine's `Eqw`): lost, and the executor deletes it. */
  | 'stuck'
  /** A state this adapter does not know (`UNKNOWN`): keep watching. */
  | 'unknown';

/** What a scheduler says about one job (or one array task). */
export interface SchedulerJobInfo {
  /** The scheduler's own state word (`RUNNING`, `qw`…), for messages. */
  readonly state: string;
  /** What it means. */
  readonly class: StateClass;
  /** Why it was stopped (`TIMEOUT`, `OUT_OF_MEMORY`, `CANCELLED`, `NODE_FAIL`…), or the scheduler's reason text. */
  readonly reason?: string | undefined;
  /** The job's exit code, when the scheduler reports one. */
  readonly exitCode?: number | undefined;
}

/** One submission: a plain job, or a job array of `array.size` tasks numbered from 1. */
export interface SubmitRequest {
  /** Job name (already safe for the scheduler: `[A-Za-z0-9_.-]`, at most 128 characters). */
  readonly name: string;
  /** Absolute path of the wrapper script (bash). */
  readonly scriptPath: string;
  /** The wrapper script's text (REST transports send it inline). */
  readonly script: string;
  /** Working directory of the job. */
  readonly workdir: string;
  /** Directory for the scheduler's own output file (what the wrapper does not capture). */
  readonly outputDir: string;
  /** Resources of one job (or one array task); `timeLimit` covers every step a packed task runs. */
  readonly resources: Resources;
  /**
   * Seconds before the time limit at which the wrapper should get `USR2` (0 = no warning). An
   * adapter asks the scheduler for it where it can (Slurm's `--signal=B:USR2@N`); the wrapper's
   * own watchdog sends it in any case, as a backstop and where the scheduler cannot.
   */
  readonly warnSeconds: number;
  /** Submit a job array of this many tasks (`--array=1-N`, `-t 1-N`). */
  readonly array?: { readonly size: number } | undefined;
  /** Variables of the runner's environment the submitting command must not pass on to the job (they hold a secret's value: see `CommandRunOptions.unsetEnv`). */
  readonly hideEnv?: readonly string[] | undefined;
}

/** A batch scheduler, as the grid core drives it. Every method is one round trip for all the ids it is given. */
export interface GridScheduler {
  /** Short name used in messages and job records (`slurm`, `sge`). */
  readonly name: string;
  /** Human name for messages (`Slurm`, `Grid Engine`). */
  readonly label: string;
  /** Key of the scheduler's job id in a handle's `info` (`slurmJobId`, `sgeJobId`). */
  readonly idKey: string;
  /** The transport in use (`cli`, `rest`), recorded in handles. */
  readonly transport: string;
  /** Environment variable that holds an array task's index inside a job (`SLURM_ARRAY_TASK_ID`, `SGE_TASK_ID`). */
  readonly arrayTaskVar: string;
  /** The time limit (seconds) the scheduler enforces for a request of `seconds` (Slurm: whole minutes, at least one). */
  enforcedLimit(seconds: number): number;
  /** Submits; resolves with the job id (an array's id for arrays). */
  submit(request: SubmitRequest): Promise<string>;
  /** The id of task `index` (1-based) of array `arrayId` (`123_4`, `123.4`). */
  taskId(arrayId: string, index: number): string;
  /** Current state of the given jobs/tasks (one query). Ids the scheduler no longer lists are absent. */
  query(ids: readonly string[]): Promise<Map<string, SchedulerJobInfo>>;
  /** Final state of ids the queue no longer lists (accounting), where the scheduler keeps one; may be empty. */
  finished(ids: readonly string[]): Promise<Map<string, SchedulerJobInfo>>;
  /** Cancels jobs/tasks (one command or one batch of requests); ids already gone are ignored. */
  cancel(ids: readonly string[]): Promise<void>;
}
