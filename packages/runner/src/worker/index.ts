/**
 * @cairn/runner/worker — what runs on the far side of an executor (a thread, a child process, a
 * remote host): run one task payload, format its log lines, encode its result.
 */
export { runTask, lineLogger } from './run-task.js';
export { encodeResult, decodeResult, failure } from './result.js';
export { workerEntryPath } from './paths.js';
export { watchParent } from './parent-watch.js';
// Command steps: the runner of programs (registered on import) and the kill-switch for their process groups.
export { runCommand } from '../command/run-command.js';
export { killAllGroups } from '../command/process-group.js';
// A far-side worker that runs steps itself (the SSH persistent worker) samples each step's processes.
export { startMeter } from '../usage/sampler.js';
export { treeUsageFields } from '../executors/usage.js';
export { LOG_PATHS } from '../command/log-paths.js';

export type { RunTaskOptions, LogLevel } from './run-task.js';
export type { AttemptLogPaths } from '../command/log-paths.js';
export type { UsageMeter } from '../usage/sampler.js';
export type { TreeUsage } from '../usage/tree-meter.js';
export type { AttemptUsage } from '../executors/usage.js';
export type { WorkerErrorData, WorkerResult } from './result.js';
