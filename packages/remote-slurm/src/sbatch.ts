/** What to submit: resources → Slurm flags (CLI) or job fields (REST). */
import type { GpuRequest, Resources } from '@cairn/core';
import { warnSecondsFor as gridWarnSeconds } from '@cairn/grid';
import type { SlurmExecutorOptions } from './options.js';

export { jobName } from '@cairn/grid';

/** One job, independent of the transport. */
export interface SubmitSpec {
  /** Job name (sanitised). */
  readonly name: string;
  /** Variables of the runner's environment `sbatch` must not pass on (they hold a secret's value; see @cairn/grid's `SubmitRequest.hideEnv`). */
  readonly hideEnv?: readonly string[] | undefined;
  /** Absolute path of the wrapper script. */
  readonly scriptPath: string;
  /** The wrapper script's text (REST sends it inline). */
  readonly script: string;
  /** Working directory. */
  readonly workdir: string;
  /** Where Slurm writes output the wrapper does not capture (before it redirects). */
  readonly slurmOutput: string;
  /** CPUs per task. */
  readonly cpus?: number | undefined;
  /** Memory per node in MiB. */
  readonly memoryMb?: number | undefined;
  /** GPUs, `[type:]count`. */
  readonly gpus?: string | undefined;
  /** Time limit in whole minutes. */
  readonly timeMinutes?: number | undefined;
  /** Seconds before the walltime at which the batch shell gets USR2 (0 = none). */
  readonly warnSeconds: number;
  /** `--partition`. */
  readonly partition?: string | undefined;
  /** `--account`. */
  readonly account?: string | undefined;
  /** `--qos`. */
  readonly qos?: string | undefined;
  /** `--constraint`. */
  readonly constraint?: string | undefined;
  /** `--requeue` (else `--no-requeue`). */
  readonly requeue: boolean;
  /** A job array of this many tasks (`--array=1-N`). */
  readonly arraySize?: number | undefined;
}

/** `D-HH:MM:SS` for a number of seconds (Slurm rounds a limit up to whole minutes). */
export function formatTimeLimit(seconds: number): string {
  const minutes = Math.max(1, Math.ceil(seconds / 60));
  const d = Math.floor(minutes / 1440);
  const h = Math.floor((minutes % 1440) / 60);
  const m = minutes % 60;
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d}-${p(h)}:${p(m)}:00`;
}

/** `--mem` value for MiB: whole GiB as `4G`, else `1536M`. */
export function formatMemory(memoryMb: number): string {
  return memoryMb % 1024 === 0 ? `${memoryMb / 1024}G` : `${memoryMb}M`;
}

function gpuString(gpus: number | GpuRequest | undefined): string | undefined {
  if (gpus === undefined) return undefined;
  const count = typeof gpus === 'number' ? gpus : gpus.count;
  if (!(count > 0)) return undefined;
  const type = typeof gpus === 'object' ? gpus.type : undefined;
  return type ? `${type}:${Math.ceil(count)}` : String(Math.ceil(count));
}

function hint(resources: Resources, key: string): string | undefined {
  const v = resources.hints?.[key];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** The limit Slurm enforces for a request of `seconds`: whole minutes, at least one. */
export function enforcedLimit(seconds: number): number {
  return Math.max(60, Math.ceil(seconds / 60) * 60);
}

/** The default walltime warning: a tenth of the limit, at most a minute. */
export function warnSecondsFor(timeLimitSeconds: number | undefined, configured: number | undefined): number {
  return gridWarnSeconds(timeLimitSeconds === undefined ? undefined : enforcedLimit(timeLimitSeconds), configured);
}

/** Builds the transport-independent part of a submission. */
export function submitSpec(
  resources: Resources,
  options: SlurmExecutorOptions,
  files: { name: string; scriptPath: string; script: string; workdir: string; slurmOutput: string },
): SubmitSpec {
  return {
    ...files,
    cpus: resources.cpu !== undefined && resources.cpu > 0 ? Math.ceil(resources.cpu) : undefined,
    memoryMb: resources.memoryGb !== undefined && resources.memoryGb > 0 ? Math.ceil(resources.memoryGb * 1024) : undefined,
    gpus: gpuString(resources.gpus),
    timeMinutes: resources.timeLimit !== undefined ? Math.max(1, Math.ceil(resources.timeLimit / 60)) : undefined,
    warnSeconds: warnSecondsFor(resources.timeLimit, options.walltimeGraceSeconds),
    partition: hint(resources, 'partition') ?? options.partition,
    account: hint(resources, 'account') ?? options.account,
    qos: hint(resources, 'qos') ?? options.qos,
    constraint: hint(resources, 'constraint') ?? options.constraint,
    requeue: options.requeue ?? false,
  };
}

/** `sbatch` arguments (without the script path) for a submission. */
export function sbatchArgs(spec: SubmitSpec, options: Pick<SlurmExecutorOptions, 'gpuFlag' | 'extraArgs'>): string[] {
  const args = ['--parsable', `--job-name=${spec.name}`, `--chdir=${spec.workdir}`, `--output=${spec.slurmOutput}`, `--error=${spec.slurmOutput}`, '--export=ALL'];
  args.push(spec.requeue ? '--requeue' : '--no-requeue');
  if (spec.cpus !== undefined) args.push(`--cpus-per-task=${spec.cpus}`);
  if (spec.memoryMb !== undefined) args.push(`--mem=${formatMemory(spec.memoryMb)}`);
  if (spec.gpus !== undefined) {
    if (options.gpuFlag === 'gres') args.push(`--gres=gpu:${spec.gpus}`);
    else args.push(`--gpus=${spec.gpus}`);
  }
  if (spec.timeMinutes !== undefined) args.push(`--time=${formatTimeLimit(spec.timeMinutes * 60)}`);
  if (spec.arraySize !== undefined) args.push(`--array=1-${spec.arraySize}`);
  if (spec.warnSeconds > 0) args.push(`--signal=B:USR2@${spec.warnSeconds}`);
  if (spec.partition) args.push(`--partition=${spec.partition}`);
  if (spec.account) args.push(`--account=${spec.account}`);
  if (spec.qos) args.push(`--qos=${spec.qos}`);
  if (spec.constraint) args.push(`--constraint=${spec.constraint}`);
  args.push(...(options.extraArgs ?? []));
  return args;
}

/** The `job` object of a slurmrestd v0.0.38 submission. */
export function restJob(spec: SubmitSpec, environment: Readonly<Record<string, string>>, extra: Readonly<Record<string, unknown>> = {}): Record<string, unknown> {
  const job: Record<string, unknown> = {
    name: spec.name,
    current_working_directory: spec.workdir,
    standard_output: spec.slurmOutput,
    standard_error: spec.slurmOutput,
    environment,
    requeue: spec.requeue,
  };
  if (spec.cpus !== undefined) job.cpus_per_task = spec.cpus;
  if (spec.memoryMb !== undefined) job.memory_per_node = spec.memoryMb;
  if (spec.gpus !== undefined) job.gpus = spec.gpus;
  if (spec.timeMinutes !== undefined) job.time_limit = spec.timeMinutes;
  if (spec.partition) job.partition = spec.partition;
  if (spec.account) job.account = spec.account;
  if (spec.qos) job.qos = spec.qos;
  if (spec.constraint) job.constraints = spec.constraint;
  if (spec.arraySize !== undefined) job.array = `1-${spec.arraySize}`;
  // v0.0.38 refuses `B:` in `signal` and ignores #SBATCH lines: the wrapper's own watchdog sends USR2.
  return { ...job, ...extra };
}
