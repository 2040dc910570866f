/**
 * The Grid Engine executor: the grid core (`@cairn/grid`: wrapper, packing into `-t` arrays,
 * ONE batched status check per interval, batched `qdel`, adoption) over the Grid Engine adapter
 * (`qsub`/`qstat -xml`/`qacct`/`qdel`).
 */
import { checkGridOptionKeys, createGridExecutor, type GridExecutor, type GridExecutorOptions, type KeyTable } from '@cairn/grid';
import type { SgeExecutorOptions } from './options.js';
import { sgeScheduler, type SgeStats } from './scheduler.js';

/** The Grid Engine executor, with counters of its calls to Grid Engine. */
export interface SgeExecutor extends GridExecutor {
  /** Calls made so far (`qsubCalls`, `qstatCalls`, `qacctCalls`, `qdelCalls`). */
  readonly stats: Readonly<SgeStats>;
}

/** Creates the Grid Engine executor. */
const SGE_KEYS: KeyTable<Omit<SgeExecutorOptions, keyof GridExecutorOptions>> = {
  exec: true,
  env: true,
  queue: true,
  project: true,
  account: true,
  parallelEnvironment: true,
  memoryResource: true,
  gpuResource: true,
  gpuTypeResource: true,
  extraArgs: true,
  accounting: true,
  accountingDelayMs: true,
  rerunnable: true,
};

export function createSgeExecutor(options: SgeExecutorOptions = {}): SgeExecutor {
  checkGridOptionKeys(options, SGE_KEYS, 'createSgeExecutor()');
  const stats: SgeStats = { qsubCalls: 0, qstatCalls: 0, qacctCalls: 0, qdelCalls: 0 };
  return Object.assign(createGridExecutor(sgeScheduler(options, stats), { ...options, name: options.name ?? 'sge' }), { stats });
}

/** Registers the executor with a runner as `sge`. */
export const sgeExecutorFactory = { name: 'sge', create: (options: SgeExecutorOptions) => createSgeExecutor(options) } as const;
