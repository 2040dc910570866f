/** What @cairn/grid uses from @cairn/runner, in one place: the plugin kit and, for the pack worker, the far side. */
export { decodeResult, encodeResult, failure, lineLogger, rebuildError, tailLogs, workerEntryPath } from '@cairn/runner/executor';
// Command steps: the template check, what the program is handed, its result file and stderr tail, written once in the runner.
export { commandArgs, commandContext, commandEnv, fileTail, lastLines, parseReportedResult, readTemplate, TAIL_BYTES } from '@cairn/runner/executor';
export { runTask } from '@cairn/runner/worker';
// Usage: what a job measures of itself on its node (pack-usage.ts, wrapper.ts).
export { startMeter, treeUsageFields } from '@cairn/runner/worker';
export { USAGE_FILE, USAGE_FILE_ENV, USAGE_SAMPLE_ENV, USAGE_SH_FUNCTIONS } from '@cairn/runner/executor';
export type { AttemptUsage, Executor, ExecutorCapabilities, ExecutorHost, JobHandle, JobRequest, JobState, JobStatus, WorkerResult } from '@cairn/runner/executor';
