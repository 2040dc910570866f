/**
 * What @cairn/grid uses from @cairn/runner, in one place. When the plugin kit moves to
 * `@cairn/runner/executor` (and the far side to `@cairn/runner/worker`), only this file changes.
 */
export { decodeResult, encodeResult, failure, lineLogger, rebuildError, runTask, tailLogs, workerEntryPath } from '@cairn/runner';
export type { Executor, ExecutorCapabilities, ExecutorHost, JobHandle, JobRequest, JobState, JobStatus, WorkerResult } from '@cairn/runner';
