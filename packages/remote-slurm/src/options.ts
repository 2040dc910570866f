/** Options of {@link createSlurmExecutor} (types only). */
import type { CommandRunner } from './command.js';

/** slurmrestd connection (`openapi/v0.0.38`, JWT authentication). */
export interface SlurmRestOptions {
  /** Base URL, e.g. `http://127.0.0.1:6820`. */
  readonly url: string;
  /** User the token was issued for (`X-SLURM-USER-NAME`). */
  readonly user: string;
  /** JWT (`scontrol token`), or a function returning a fresh one (called per request). */
  readonly token: string | (() => string | Promise<string>);
  /** Environment of submitted jobs (slurmrestd requires one). @default { PATH, HOME, LANG } of this process */
  readonly jobEnvironment?: Readonly<Record<string, string>>;
  /** Per-request timeout. @default 30000 */
  readonly timeoutMs?: number;
  /**
   * Requests in flight at once; the rest wait their turn. slurmrestd serves a few connections at
   * a time and resets the ones beyond what it can take (200 simultaneous submits did here). @default 8
   */
  readonly maxInFlight?: number;
}

/** Status-polling schedule: starts fast, grows while nothing changes. */
export interface SlurmPollOptions {
  /** First interval after a submit or a change. @default 200 */
  readonly initialMs?: number;
  /** Upper bound; keep it well below the cluster's `MinJobAge`. @default 5000 */
  readonly maxMs?: number;
  /** Growth factor per quiet poll. @default 1.5 */
  readonly factor?: number;
}

/** Options of the Slurm executor. */
export interface SlurmExecutorOptions {
  /** Registry name. @default 'slurm' */
  readonly name?: string;
  /** How to talk to Slurm: its CLI (`sbatch`, `squeue`, `sacct`, `scancel`) or slurmrestd. @default 'cli' */
  readonly transport?: 'cli' | 'rest';
  /** Runs the CLI commands (CLI transport). @default a local `execFile` runner with {@link env} */
  readonly exec?: CommandRunner;
  /** Extra environment for the local CLI commands (e.g. `{ SLURM_CONF }`); ignored when `exec` is given. */
  readonly env?: Readonly<Record<string, string>>;
  /** slurmrestd connection (required for `transport: 'rest'`). */
  readonly rest?: SlurmRestOptions;
  /** Partition (`--partition`); a step's `resources.hints.partition` wins. */
  readonly partition?: string;
  /** Account (`--account`); `resources.hints.account` wins. */
  readonly account?: string;
  /** QOS (`--qos`); `resources.hints.qos` wins. */
  readonly qos?: string;
  /** Node features (`--constraint`); `resources.hints.constraint` wins. */
  readonly constraint?: string;
  /** Free-form extra `sbatch` arguments (CLI transport), e.g. `['--exclusive']`. */
  readonly extraArgs?: readonly string[];
  /** Extra fields of the REST `job` object (REST transport). */
  readonly extraJobFields?: Readonly<Record<string, unknown>>;
  /** Let Slurm requeue jobs after a node failure (`--requeue`). Cairn retries lost jobs itself. @default false */
  readonly requeue?: boolean;
  /** How GPUs are requested: `--gpus=[type:]N` or `--gres=gpu[:type]:N`. @default 'gpus' */
  readonly gpuFlag?: 'gpus' | 'gres';
  /** Node binary on the compute nodes. @default process.execPath */
  readonly nodePath?: string;
  /** Worker entry on the compute nodes. @default workerEntryPath() of @cairn/runner */
  readonly workerEntry?: string;
  /** Working directory of jobs. @default process.cwd() */
  readonly workdir?: string;
  /** Prefix of job names. @default 'cairn' */
  readonly jobNamePrefix?: string;
  /**
   * Seconds before the walltime at which the job gets `USR2`: the worker is stopped and the
   * attempt recorded as `TIMEOUT` before Slurm kills it. `0` disables the warning.
   * @default min(60, a tenth of the time limit)
   */
  readonly walltimeGraceSeconds?: number;
  /** Status polling. */
  readonly poll?: SlurmPollOptions;
  /** How long to wait for a finished job's exit-code file (shared-filesystem lag). @default 5000 */
  readonly exitFileGraceMs?: number;
  /** Jobs and the runner see the same filesystem (job files, store). @default true */
  readonly sharedFs?: boolean;
  /** Jobs this executor keeps at once. @default the runner's `maxConcurrent` */
  readonly maxConcurrency?: number;
}
