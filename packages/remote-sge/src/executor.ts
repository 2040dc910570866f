/**
 * The Grid Engine executor: the grid core (`@cairn/grid`: wrapper, packing into `-t` arrays,
 * ONE batched status check per interval, batched `qdel`, adoption) over the Grid Engine adapter
 * (`qsub`/`qstat -xml`/`qacct`/`qdel`).
 */
import { createGridExecutor, type GridExecutor } from '@cairn/grid';
import type { SgeExecutorOptions } from './options.js';
import { sgeScheduler, type SgeStats } from './scheduler.js';

/** The Grid Engine executor, with counters of its calls to Grid Engine. */
export interface SgeExecutor extends GridExecutor {
  /** Calls made so far (`qsubCalls`, `qstatCalls`, `qacctCalls`, `qdelCalls`). */
  readonly stats: Readonly<SgeStats>;
}

/** Creates the Grid Engine executor. */
export function createSgeExecutor(options: SgeExecutorOptions = {}): SgeExecutor {
  const stats: SgeStats = { qsubCalls: 0, qstatCalls: 0, qacctCalls: 0, qdelCalls: 0 };
  return Object.assign(createGridExecutor(sgeScheduler(options, stats), { ...options, name: options.name ?? 'sge' }), { stats });
}

/** Registers the executor with a runner as `sge`. */
export const sgeExecutorFactory = { name: 'sge', create: (options: SgeExecutorOptions) => createSgeExecutor(options) } as const;
