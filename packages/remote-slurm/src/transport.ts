/** The two ways to talk to Slurm, behind one small interface. */
import type { SchedulerJobInfo } from '@cairn/grid';
import type { SubmitSpec } from './sbatch.js';

/** What Slurm says about one job (its state classified by `slurmInfo`). */
export type SlurmJobInfo = SchedulerJobInfo;

/** Counters of calls to Slurm (for tests and diagnostics). */
export interface SlurmStats {
  /** `sbatch` runs (CLI). */
  sbatchCalls: number;
  /** `squeue` runs (CLI). */
  squeueCalls: number;
  /** `sacct` runs, with or without `-c` (CLI). */
  sacctCalls: number;
  /** `scancel` runs (CLI). */
  scancelCalls: number;
  /** slurmrestd requests (REST). */
  restCalls: number;
}

/** A Slurm client. Every method is one round trip for all the ids it is given. */
export interface SlurmTransport {
  /** `cli` or `rest`. */
  readonly kind: 'cli' | 'rest';
  /** Submits a job (or a job array); resolves with its Slurm id (the array's id). */
  submit(spec: SubmitSpec): Promise<string>;
  /** Current state of the given jobs or array tasks (`123_4`) (one `squeue`, or one `GET /jobs`). Jobs Slurm no longer lists are absent. */
  query(ids: readonly string[]): Promise<Map<string, SlurmJobInfo>>;
  /** Final state of jobs the queue no longer lists (accounting / job-completion log); may be empty. */
  finished(ids: readonly string[]): Promise<Map<string, SlurmJobInfo>>;
  /** Cancels jobs (one `scancel`); ids that are already gone are ignored. */
  cancel(ids: readonly string[]): Promise<void>;
}
