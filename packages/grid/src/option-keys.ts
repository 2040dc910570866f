/**
 * Unknown option keys of a grid executor are refused (`CAIRN_UNKNOWN_OPTION`, naming the nearest
 * known one): a misspelt `partiton` or `pack: { stepPerTask }` used to be dropped in silence. The
 * key tables are typed against the option interfaces, so a new option cannot be forgotten here.
 * Values are checked where they are used.
 */
import { checkKnownKeys } from '@cairn/core';
import type { GridExecutorOptions } from './options.js';
import type { PackOptions } from './pack-policy.js';
import type { PollOptions } from './poller.js';

/** Every key of `T`, as data. */
export type KeyTable<T> = { readonly [K in keyof Required<T>]: true };

const GRID_KEYS: KeyTable<GridExecutorOptions> = {
  name: true,
  nodePath: true,
  workerEntry: true,
  packWorker: true,
  workdir: true,
  jobNamePrefix: true,
  walltimeGraceSeconds: true,
  poll: true,
  exitFileGraceMs: true,
  jobAccess: true,
  sharedFs: true,
  maxConcurrency: true,
  pack: true,
  maxSubmitsInFlight: true,
  packRoot: true,
};
const PACK_KEYS: KeyTable<PackOptions> = { stepsPerTask: true, tasksPerArray: true, maxWaitMs: true, maxStepSeconds: true, maxTaskSeconds: true };
const POLL_KEYS: KeyTable<PollOptions> = { initialMs: true, maxMs: true, factor: true };

/**
 * Checks the keys of a grid executor's `options`: the grid core's, plus `own` (the adapter's
 * table), and the nested `pack` and `poll` objects. `where` names the call (`createSlurmExecutor()`).
 */
export function checkGridOptionKeys<T extends object>(options: T, own: KeyTable<Omit<T, keyof GridExecutorOptions>>, where: string): void {
  checkKnownKeys(options, [...Object.keys(GRID_KEYS), ...Object.keys(own)], where);
  const o = options as GridExecutorOptions;
  if (typeof o.pack === 'object' && o.pack !== null) checkKnownKeys(o.pack, Object.keys(PACK_KEYS), `${where}: pack`);
  if (typeof o.poll === 'object' && o.poll !== null) checkKnownKeys(o.poll, Object.keys(POLL_KEYS), `${where}: poll`);
}
