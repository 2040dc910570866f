/**
 * The Slurm executor: the grid core (`@cairn/grid`: wrapper, packing into `--array` jobs,
 * ONE batched status check per interval, batched `scancel`, adoption) over the Slurm adapter
 * (`sbatch`/`squeue`/`sacct`/`scancel`, or slurmrestd).
 */
import { createGridExecutor, type GridExecutor } from '@cairn/grid';
import type { SlurmExecutorOptions } from './options.js';
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
export function createSlurmExecutor(options: SlurmExecutorOptions = {}): SlurmExecutor {
  const stats: SlurmStats = { sbatchCalls: 0, squeueCalls: 0, sacctCalls: 0, scancelCalls: 0, restCalls: 0 };
  const scheduler = slurmScheduler(options, stats);
  return Object.assign(createGridExecutor(scheduler, { ...options, name: options.name ?? 'slurm' }), { stats, transport: scheduler.transport });
}

/** Registers the executor with a runner as `slurm`. */
export const slurmExecutorFactory = { name: 'slurm', create: (options: SlurmExecutorOptions) => createSlurmExecutor(options) } as const;
