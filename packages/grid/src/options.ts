/** Options every grid executor takes (types only); adapters add their scheduler's own. */
import type { JobAccess } from './job-dir.js';
import type { PackOptions } from './pack-policy.js';
import type { PollOptions } from './poller.js';

/** Options of {@link createGridExecutor}, shared by every scheduler adapter. */
export interface GridExecutorOptions {
  /** Registry name. @default the scheduler's name (`slurm`, `sge`) */
  readonly name?: string;
  /** Node binary on the compute nodes. @default process.execPath */
  readonly nodePath?: string;
  /** The runner's worker entry on the compute nodes. @default workerEntryPath() of @cairn/runner */
  readonly workerEntry?: string;
  /** The pack worker on the compute nodes. @default packWorkerPath() of @cairn/grid */
  readonly packWorker?: string;
  /** Working directory of jobs. @default process.cwd() */
  readonly workdir?: string;
  /** Prefix of job names. @default 'cairn' */
  readonly jobNamePrefix?: string;
  /**
   * Seconds before the walltime at which the job gets `USR2`: the worker is stopped and the
   * attempt recorded as `TIMEOUT` before the scheduler kills it. `0` disables the warning.
   * @default min(60, a tenth of the time limit)
   */
  readonly walltimeGraceSeconds?: number;
  /** Status polling. */
  readonly poll?: PollOptions;
  /** How long to wait for a finished job's exit-code file (shared-filesystem lag). @default 5000 */
  readonly exitFileGraceMs?: number;
  /**
   * Who may write job directories and files (scripts the scheduler executes as the job's user).
   * `'user'`: the runner's user only (0700/0600). `'group'`: also its group (0770/0660), for jobs
   * that run as another account of the same project group, e.g. submitted over ssh as a service
   * user; the store directory should then belong to that group with the setgid bit set.
   * Never writable by others. @default 'user'
   */
  readonly jobAccess?: JobAccess;
  /** Jobs and the runner see the same filesystem (job files, store). @default true */
  readonly sharedFs?: boolean;
  /**
   * Steps this executor keeps at once. With `pack`, set it (and the runner's `maxConcurrent`)
   * high enough for whole batches to be ready at once. @default the runner's `maxConcurrent`
   */
  readonly maxConcurrency?: number;
  /**
   * Pack many small ready steps of one resource shape into job arrays: one submission and one
   * Node start per task of up to `stepsPerTask` steps. Status, logs, exit codes, retries and
   * cancellation stay per step. A step opts out with `resources.hints.pack: false`.
   * @default undefined (every step is its own job)
   */
  readonly pack?: PackOptions;
  /**
   * Submissions in flight at once; the rest wait their turn (status checks and cancels never
   * wait behind them). A run with a thousand ready steps would otherwise start a thousand
   * `sbatch`/`qsub` at once. @default 8
   */
  readonly maxSubmitsInFlight?: number;
  /** Directory of pack directories (on the filesystem jobs share). @default `<store prefix>/.cairn/grid/<name>` */
  readonly packRoot?: string;
}
