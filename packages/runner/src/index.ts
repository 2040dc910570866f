/**
 * @cairn/runner — the StepRunner for pipeline authors: runs step graphs lazily and
 * content-addressed, with leases shared across processes and hosts, retries, timeouts,
 * cancellation, a dry run and executor plugins. Plugin authors: `@cairn/runner/executor` (executors)
 * and `@cairn/runner/store` (stores); the far side of an executor: `@cairn/runner/worker`.
 */
// Command steps (core's `command()`) run through this package's runner of programs.
import './command/register.js';
export { StepRunner } from './runner.js';
export { RUNNER_DEFAULTS } from './defaults.js';
export { run } from './run.js';
export { StepRunError } from './errors.js';
export { currentClient } from './context.js';
export { LocalStore } from './store/local/store.js';
export { localLayout } from './store/local/layout.js';
export { MemoryStore } from './store/memory.js';
export { parseStatus, STATUS_FILE } from './store/status.js';
export { RECORD_FILE } from './store/records.js';
export { attemptFilesIn } from './store/attempt-files.js';
export { isStale, leaseTiming } from './store/leases.js';
export { parseStoreMarker, STORE_MARKER_FILE } from './store/marker.js';
// The runner's own option checks, for tools that take the same settings from elsewhere (the CLI's config file).
export { checkStepRunnerOptions } from './options.js';
export { checkNotifyOptions, checkWebhookUrl, slackMessage } from './notify/index.js';
export { checkSecretsOptions, LiveLogMasks, maskSoFar, maskText } from './secrets/index.js';
export { STEP_STATES, STATUSES, FINAL_STATES, ATTEMPT_ENDS, isFinalState, isOkState } from './states.js';
export { builtinExecutors } from './registry.js';
export { builtinStores, schemeOf } from './store-registry.js';
export { createInlineExecutor } from './executors/inline.js';
export { createThreadsExecutor, createProcessExecutor } from './executors/local.js';
export { tailLogs } from './executors/common.js';
export { workerEntryPath } from './worker/paths.js';
// What an attempt used (CPU, peak memory, exit code), and step output captured into its log.
export { parseUsage, readUsage, usageFile, USAGE_FILE } from './executors/usage.js';
export { uncaptured } from './executors/stdio-capture.js';
// The run journal every run writes into its store (the `journal` option): where it is and how its lines read.
export { journalDir, journalFile } from './journal/paths.js';
export { eventToJson } from './journal/line.js';
// Loading user modules (TypeScript, ES syntax in CommonJS packages) and describing a failed import.
export { describeLoadError, isTypeScriptModule, registerEsmSyntaxHook, registerModuleLoaders } from './worker/user-modules.js';

export type { StepRunnerOptions, RunOptions, Steps } from './runner.js';
export type { CommandProvider, EnvProvider, FileProvider, LiveLogView, SecretProvider, SecretsOptions } from './secrets/index.js';
export type { CommandSink, NotifyCounts, NotifyError, NotifyEvent, NotifyEventType, NotifyOptions, NotifySink, RunEndNotice, StepFailedNotice, StepSlowNotice, WebhookSink } from './notify/index.js';
export type { RunFunctionOptions } from './run.js';
export type { RunnerLogger } from './run/run.js';
export type { StepInput } from './run/discover.js';
export type { RunSummary, StepOutcome } from './run/summary.js';
export type { StepFailure } from './errors.js';
export type { ExecutorClient, LoadedArtifact } from './context.js';
export type { Plan, PlanStep, PlanState } from './plan.js';
export { PLAN_LABELS } from './plan.js';
export type { StepEvent, RunEvent, RunnerEvent, RunnerListener } from './events.js';
export type { JournalEntry, JournalEvent, JournalPlan, JournalPlanStep } from './journal/entry.js';
export type { StepState, FinalStepState, StateInfo, StatusInfo, AttemptEnd, AttemptEndInfo, RetryBudget } from './states.js';
export type { AttemptLogs, CheckpointSummary, CommitRequest, FoundStep, Leftover, ListedFile, StepStoreAccess, Store, StoreBrowser, StoreFactory, StoredState, StagedAttempt } from './store/store.js';
export type { LocalStoreOptions } from './store/local/store.js';
export type { MemoryEntries, MemoryEntry } from './store/memory.js';
export type { StatusToken, ParsedStatus } from './store/status.js';
export type { ArtifactRecord, AttemptRecord, ErrorData, JobRecord } from './store/records.js';
export type { LeaseHolder, LeaseInfo, LeaseOptions, LeaseTiming } from './store/leases.js';
export type { StoreMarker } from './store/marker.js';
export type { ExecutorsOption } from './registry.js';
export type { Executor, ExecutorFactory, JobHandle, JobStatus } from './executor/contract.js';
export type { ThreadsExecutorOptions, ProcessExecutorOptions } from './executors/local.js';
export type { InlineExecutorOptions } from './executors/inline.js';
export type { TailLogsOptions } from './executors/common.js';
export type { ModuleLoaders } from './worker/user-modules.js';
export type { AttemptUsage } from './executors/usage.js';
