/** What this plugin uses from @cairn/runner, in one place. */
export { decodeResult, rebuildError, tailLogs, workerEntryPath } from '@cairn/runner/executor';
export type { Executor, ExecutorCapabilities, ExecutorHost, JobHandle, JobRequest, JobState, JobStatus } from '@cairn/runner/executor';
