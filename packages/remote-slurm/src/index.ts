/**
 * @cairn/remote-slurm — an executor plugin that runs Cairn steps as Slurm jobs, through the
 * Slurm CLI (locally or over a {@link CommandRunner}, e.g. ssh to a login node) or slurmrestd.
 * A thin adapter over the grid core `@cairn/grid` (packing into job arrays: the `pack` option).
 */
export { createSlurmExecutor, slurmExecutorFactory } from './executor.js';
export type { SlurmExecutor } from './executor.js';
export { localCommandRunner, sshCommandRunner } from './command.js';
export type { CommandResult, CommandRunner, LocalCommandRunnerOptions, SshCommandRunner, SshCommandRunnerOptions } from './command.js';
export type { SlurmExecutorOptions, SlurmPollOptions, SlurmRestOptions } from './options.js';
export type { PackOptions } from '@cairn/grid';
export type { SlurmStats } from './transport.js';
export { formatTimeLimit, formatMemory, jobName } from './sbatch.js';
export { SLURM_STATES } from './states.js';
