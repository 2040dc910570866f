/** What @cairn/grid uses from @cairn/runner, in one place: the plugin kit and, for the pack worker, the far side. */
export { decodeResult, encodeResult, failure, lineLogger, rebuildError, tailLogs, workerEntryPath } from '@cairn/runner/executor';
// Command steps: the template check, what the program is handed, its result file and stderr tail, written once in the runner.
export { commandArgs, commandContext, commandEnv, commandLaunch, commandShellSetup, fetchJobDeps, fileTail, lastLines, parseReportedResult, readTemplate, TAIL_BYTES } from '@cairn/runner/executor';
// Secrets: the variables that carry them, and the 0600 file the wrapper or pack worker reads, then deletes.
export { maskText, SECRETS_FILE, secretsFileText, secretVars, stripSecretEnv, takeSecretsFile } from '@cairn/runner/executor';
export { runTask } from '@cairn/runner/worker';
// Usage: what a job measures of itself on its node (pack-usage.ts, wrapper.ts).
export { startMeter, treeUsageFields } from '@cairn/runner/worker';
export { USAGE_FILE, USAGE_FILE_ENV, USAGE_SAMPLE_ENV, USAGE_SH_FUNCTIONS } from '@cairn/runner/executor';
export type { AttemptUsage, CommandLaunch, Executor, StepStoreAccess, ExecutorCapabilities, ExecutorHost, JobHandle, JobRequest, JobState, JobStatus, WorkerResult } from '@cairn/runner/executor';
