/** What @cairn/grid uses from @cairn/runner, in one place: the plugin kit and, for the pack worker, the far side. */
export { decodeResult, encodeResult, failure, lineLogger, readTemplate, rebuildError, resolveValue, tailLogs, workerEntryPath } from '@cairn/runner/executor';
export { runTask } from '@cairn/runner/worker';
export type { Executor, ExecutorCapabilities, ExecutorHost, JobHandle, JobRequest, JobState, JobStatus, WorkerResult } from '@cairn/runner/executor';
