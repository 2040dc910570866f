/**
 * @cairn/runner/executor — the kit for executor plugin authors: the contract (types only), the
 * worker result format, log helpers and where the built worker entry is. A plugin imports this,
 * never the engine (`@cairn/runner`).
 */
export { decodeResult, encodeResult, failure, rebuildError } from '../worker/result.js';
export { lineLogger } from '../worker/run-task.js';
export { tailLogs } from '../executors/common.js';
export { workerEntryPath } from '../worker/paths.js';
// Command steps run by a remote executor without a Node worker: the template check and its context values, written once.
export { readTemplate, resolveValue } from '../command/template.js';

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
export type { StagedAttempt } from '../store/store.js';
export type { JobRecord } from '../store/records.js';
export type { WorkerErrorData, WorkerResult } from '../worker/result.js';
export type { TailLogsOptions } from '../executors/common.js';
export type { LogLevel } from '../worker/run-task.js';
