/**
 * @cairn/grid — the grid-executor core every batch-scheduler plugin is built on (Slurm in
 * `@cairn/remote-slurm`, Grid Engine in `@cairn/remote-sge`). An adapter implements
 * {@link GridScheduler}; {@link createGridExecutor} makes the executor.
 */
export { createGridExecutor } from './executor.js';
export type { GridExecutor } from './executor.js';
export type { GridExecutorOptions } from './options.js';
export { checkGridOptionKeys } from './option-keys.js';
export type { KeyTable } from './option-keys.js';
export type { JobAccess } from './job-dir.js';
export type { GridScheduler, SchedulerJobInfo, StateClass, SubmitRequest } from './scheduler.js';
export type { GridCounters } from './submission.js';
export type { GridJobRecord, PackPlace } from './tracked.js';

// Transports.
export { localCommandRunner, runChecked } from './command.js';
export { createLimiter } from './limit.js';
export type { CommandResult, CommandRunner, CommandRunOptions, LocalCommandRunnerOptions } from './command.js';
export { remoteCommand, sshCommandRunner } from './ssh-command.js';
export type { SshCommandRunner, SshCommandRunnerOptions } from './ssh-command.js';

// The status decision, for adapters' state-table tests.
export { decide, isTerminalClass, WARN_SIGNAL } from './decide.js';
export type { Observation, Verdict } from './decide.js';

// Packing.
export { packable, packPolicy, planPacks, shapeKey, NO_PACK_HINT, TASK_START_SECONDS } from './pack-policy.js';
export type { PackOptions, PackPolicy, PlannedTask } from './pack-policy.js';
export type { PollOptions } from './poller.js';

// Job files and scripts.
export { formatExitFile, jobFiles, packFiles, parseExitFile } from './files.js';
export type { ExitRecord, JobFiles, PackFiles } from './files.js';
export { packWrapperScript, wrapperScript, RESTART_EXIT } from './wrapper.js';
export type { PackWrapperInit, WrapperInit } from './wrapper.js';
export { shQuote } from './quote.js';
export { jobName, warnSecondsFor } from './names.js';
export { logTail } from './logs.js';
export { packWorkerPath } from './paths.js';
