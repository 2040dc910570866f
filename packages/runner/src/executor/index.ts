/**
 * @cairn/runner/executor — the kit for executor plugin authors: the contract (types only), the
 * worker result format, log helpers and where the built worker entry is. A plugin imports this,
 * never the engine (`@cairn/runner`).
 */
export { decodeResult, encodeResult, failure, rebuildError } from '../worker/result.js';
export { lineLogger } from '../worker/run-task.js';
export { tailLogs } from '../executors/common.js';
export { workerEntryPath } from '../worker/paths.js';
// Code for a node without the runner's files: the step's module and the worker entry, bundled.
export { Bundler } from './bundler.js';
// A far-side worker measures its own process tree when its wrapper sets these (worker/self-usage.ts).
export { USAGE_FILE_ENV, USAGE_SAMPLE_ENV } from '../worker/self-usage.js';
export { parseUsage, usageFile, USAGE_FILE } from '../executors/usage.js';
// ...and a shell wrapper measures a program where there is no Node (usage/usage-sh.ts).
export { SH_SAMPLE_SECONDS, USAGE_SH_FUNCTIONS } from '../usage/usage-sh.js';
export { checkSources, readTemplate, resolveValue } from '../command/template.js';
export { parseReportedResult } from '../command/result-file.js';
export { fileTail, lastLines, TAIL_BYTES, TAIL_LINES } from '../command/tail.js';
// Command steps run without a Node worker (a shell on a remote node): the context file and the variables the program gets, built once.
export { commandArgs, commandContext, commandEnv, commandLaunch, commandShellSetup } from '../command/context-file.js';
export type { CommandLaunch } from '../command/context-file.js';
export { fetchJobDeps } from '../command/local-deps.js';
// Secrets on another host: the variables that carry them and the file that carries those (read, then deleted, by the far side).
export { maskedLogWriter, type MaskedLogWriter } from '../secrets/masked-writer.js';
export { maskText } from '../secrets/mask.js';
export { commandSecretEnv, parseSecretsFile, SECRETS_FILE, secretsFileText, secretVars, stripSecretEnv, takeSecretsFile } from '../secrets/deliver.js';

export type {
  CancelSupport,
  Executor,
  ExecutorCapabilities,
  ExecutorFactory,
  ExecutorHost,
  JobHandle,
  JobRequest,
  JobState,
  JobStatus,
  TerminalState,
} from './contract.js';
export type { CodeBundle, EsbuildApi } from './bundler.js';
export type { StagedAttempt, StepStoreAccess } from '../store/store.js';
export type { AttemptUsage } from '../executors/usage.js';
export type { JobRecord } from '../store/records.js';
export type { WorkerErrorData, WorkerResult } from '../worker/result.js';
export type { TailLogsOptions } from '../executors/common.js';
export type { LogLevel } from '../worker/run-task.js';
export type { ReportedResult } from '../command/result-file.js';
export type { CommandAttempt } from '../command/context-file.js';
