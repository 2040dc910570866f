/**
 * @cairn/runner — the StepRunner: caching, leases, failure propagation, executor plugins and
 * local executors.
 */
export { StepRunner } from './runner.js';
export { RUNNER_DEFAULTS } from './defaults.js';
export { run } from './run.js';
export { StepRunError } from './errors.js';
export { currentClient } from './context.js';
export { LocalStore } from './store/local.js';
export { MemoryStore, type MemoryEntries, type MemoryEntry } from './store/memory.js';
export { parseStatus, STATUS_FILE } from './store/status.js';
export { JOB_FILE, RECORD_FILE } from './store/records.js';
export { LEASE_FILE, isStale } from './store/leases.js';
export { builtinExecutors } from './registry.js';
export { createInlineExecutor } from './executors/inline.js';
export { createThreadsExecutor, createProcessExecutor, runTask, workerEntryPath } from './executors/local.js';
export { tailLogs } from './executors/common.js';
// What an attempt used (CPU, peak memory, exit code), and step output captured into its log.
export { readUsage, usageFile, USAGE_FILE } from './executors/usage.js';
export { uncaptured } from './executors/stdio-capture.js';
// The worker side of the result format and log lines, for executors that run steps in their own workers.
export { decodeResult, encodeResult, failure, rebuildError } from './worker/result.js';
export { lineLogger } from './worker/run-task.js';
// Loading user modules (TypeScript, ES syntax in CommonJS packages) and describing a failed import.
export { describeLoadError, isTypeScriptModule, registerEsmSyntaxHook, registerModuleLoaders } from './worker/user-modules.js';

export type { StepRunnerOptions, RunOptions, Steps } from './runner.js';
export type { RunFunctionOptions } from './run.js';
export type { RunSummary, StepOutcome, RunnerLogger, StepInput } from './scheduler.js';
export type { StepFailure } from './errors.js';
export type { ExecutorClient, LoadedArtifact } from './context.js';
export type { Plan, PlanStep, PlanState } from './plan.js';
export type { StepEvent, RunEvent, RunnerEvent, RunnerListener, StepState, FinalStepState } from './events.js';
export type { Store, StoredState, AttemptFiles, SyncStoreOps } from './store/store.js';
export type { LocalStoreOptions } from './store/local.js';
export type { StatusToken, ParsedStatus } from './store/status.js';
export type { ArtifactRecord, AttemptRecord, DeferredRecord, ErrorData, JobRecord } from './store/records.js';
export type { LeaseHolder, LeaseInfo, LeaseOptions } from './store/leases.js';
export type { ExecutorsOption } from './registry.js';
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
} from './executor.js';
export type { ThreadsExecutorOptions, ProcessExecutorOptions, RunTaskOptions } from './executors/local.js';
export type { InlineExecutorOptions } from './executors/inline.js';
export type { TailLogsOptions } from './executors/common.js';
export type { WorkerErrorData, WorkerResult } from './worker/result.js';
export type { ModuleLoaders } from './worker/user-modules.js';
export type { AttemptUsage } from './executors/usage.js';
