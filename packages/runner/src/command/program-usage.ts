/**
 * A command step's program usage (sampled by `runCommand`, usage-sink.ts) as the attempt's
 * `usage.json`, for the executors that run command steps in the runner's process.
 */
import { treeUsageFields, type AttemptUsage } from '../executors/usage.js';
import type { ProgramUsage } from './usage-sink.js';

/** The `usage.json` of an attempt whose program `executor` ran and sampled. */
export function programUsageFields(executor: string, used: ProgramUsage): AttemptUsage {
  return { executor, ...treeUsageFields(used), exitCode: used.exitCode, signal: used.signal };
}
