/**
 * The Slurm executor: the grid core (`@cairn/grid`: wrapper, packing into `--array` jobs,
 * ONE batched status check per interval, batched `scancel`, adoption) over the Slurm adapter
 * (`sbatch`/`squeue`/`sacct`/`scancel`, or slurmrestd).
 */
import { checkKnownKeys } from '@cairn/core';
import { checkGridOptionKeys, createGridExecutor, type GridExecutor, type GridExecutorOptions, type KeyTable } from '@cairn/grid';
import type { SlurmExecutorOptions, SlurmRestOptions } from './options.js';
import { slurmScheduler } from './scheduler.js';
import type { SlurmStats } from './transport.js';

/** The Slurm executor, with counters of its calls to Slurm. */
export interface SlurmExecutor extends GridExecutor {
  /** Calls made so far (`squeueCalls`, `restCalls`, `sbatchCalls`…). */
  readonly stats: Readonly<SlurmStats>;
  /** The transport in use. */
  readonly transport: 'cli' | 'rest';
}

/** Creates the Slurm executor. */
const SLURM_KEYS: KeyTable<Omit<SlurmExecutorOptions, keyof GridExecutorOptions>> = {
  transport: true,
  exec: true,
  env: true,
  rest: true,
  partition: true,
  account: true,
  qos: true,
  constraint: true,
  extraArgs: true,
  extraJobFields: true,
  requeue: true,
  gpuFlag: true,
};
const REST_KEYS: KeyTable<SlurmRestOptions> = { url: true, user: true, token: true, jobEnvironment: true, timeoutMs: true, maxInFlight: true };

export function createSlurmExecutor(options: SlurmExecutorOptions = {}): SlurmExecutor {
  checkGridOptionKeys(options, SLURM_KEYS, 'createSlurmExecutor()');
  if (typeof options.rest === 'object' && options.rest !== null) checkKnownKeys(options.rest, Object.keys(REST_KEYS), 'createSlurmExecutor(): rest');
  const stats: SlurmStats = { sbatchCalls: 0, squeueCalls: 0, sacctCalls: 0, scancelCalls: 0, restCalls: 0 };
  const scheduler = slurmScheduler(options, stats);
  return Object.assign(createGridExecutor(scheduler, { ...options, name: options.name ?? 'slurm' }), { stats, transport: scheduler.transport });
}

/** Registers the executor with a runner as `slurm`. */
export const slurmExecutorFactory = { name: 'slurm', create: (options: SlurmExecutorOptions) => createSlurmExecutor(options) } as const;
