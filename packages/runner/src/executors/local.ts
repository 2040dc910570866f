/** The local executors and the worker runtime they share with remote executors. */
export { createThreadsExecutor } from './threads.js';
export type { ThreadsExecutorOptions } from './threads.js';
export { createProcessExecutor } from './process.js';
export type { ProcessExecutorOptions } from './process.js';
export { runTask } from '../worker/run-task.js';
export type { RunTaskOptions } from '../worker/run-task.js';
export { workerEntryPath } from '../worker/paths.js';
