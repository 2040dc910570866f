/**
 * @cairn/runner/worker — what runs on the far side of an executor (a thread, a child process, a
 * remote host): run one task payload, format its log lines, encode its result.
 */
export { runTask, lineLogger } from './run-task.js';
export { encodeResult, decodeResult, failure } from './result.js';
export { workerEntryPath } from './paths.js';
export { watchParent } from './parent-watch.js';

export type { RunTaskOptions, LogLevel } from './run-task.js';
export type { WorkerErrorData, WorkerResult } from './result.js';
