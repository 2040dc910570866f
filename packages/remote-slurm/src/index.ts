/**
 * @cairn/remote-slurm — an executor plugin that runs Cairn steps as Slurm jobs, through the
 * Slurm CLI (locally or over a {@link CommandRunner}, e.g. SSH) or slurmrestd.
 */
export { createSlurmExecutor, slurmExecutorFactory } from './executor.js';
export type { SlurmExecutor } from './executor.js';
export { localCommandRunner } from './command.js';
export type { CommandResult, CommandRunner, LocalCommandRunnerOptions } from './command.js';
export type { SlurmExecutorOptions, SlurmPollOptions, SlurmRestOptions } from './options.js';
export type { SlurmStats } from './transport.js';
export { formatTimeLimit, formatMemory, jobName } from './sbatch.js';
