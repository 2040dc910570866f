/** Options of {@link createSlurmExecutor} (types only). */
import type { CommandRunner, GridExecutorOptions, PollOptions } from '@cairn/grid';

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

/** Status-polling schedule: starts fast, grows while nothing changes (keep `maxMs` well below the cluster's `MinJobAge`). */
export type SlurmPollOptions = PollOptions;

/**
 * Options of the Slurm executor: the grid core's (`pack`, `poll`, `nodePath`, `workerEntry`,
 * `walltimeGraceSeconds`…) and Slurm's own.
 */
export interface SlurmExecutorOptions extends GridExecutorOptions {
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
}
