/** What @cairn/remote-ray uses from @cairn/runner, in one place: the plugin kit (`@cairn/runner/executor`), never the engine. */
export { Bundler, commandArgs, commandContext, commandEnv, commandLaunch, commandShellSetup, fetchJobDeps, decodeResult, fileTail, lastLines, lineLogger, parseReportedResult, readTemplate, rebuildError, TAIL_BYTES, tailLogs, workerEntryPath } from '@cairn/runner/executor';
// Secrets (secrets.ts): the variables that carry them and their file's text; a command template without them.
export { maskText, SECRETS_FILE, secretsFileText, secretVars, stripSecretEnv } from '@cairn/runner/executor';
export type { Executor, ExecutorCapabilities, ExecutorFactory, ExecutorHost, JobHandle, JobRequest, JobState, JobStatus, WorkerResult } from '@cairn/runner/executor';
