/**
 * @cairn/remote-sge — an executor plugin that runs Cairn steps as Son of Grid Engine jobs
 * (`qsub`, `qstat -xml`, `qacct`, `qdel`), locally or over a `CommandRunner` (ssh to a login
 * node). A thin adapter over the grid core `@cairn/grid` (packing into `-t` arrays: `pack`).
 */
export { createSgeExecutor, sgeExecutorFactory } from './executor.js';
export type { SgeExecutor } from './executor.js';
export type { SgeExecutorOptions } from './options.js';
export type { SgeStats } from './scheduler.js';
export { formatDuration, formatMemory, qsubArgs } from './qsub.js';
export { SGE_FAILED_CODES, SGE_STATE_LETTERS } from './states.js';
export { localCommandRunner, sshCommandRunner } from '@cairn/grid';
export type { CommandResult, CommandRunner, PackOptions, SshCommandRunner, SshCommandRunnerOptions } from '@cairn/grid';
