/** How the CLI transport runs Slurm commands: the grid core's command runners (local `execFile`, or ssh to a login node). */
export { localCommandRunner, sshCommandRunner } from '@cairn/grid';
export type { CommandResult, CommandRunner, LocalCommandRunnerOptions, SshCommandRunner, SshCommandRunnerOptions } from '@cairn/grid';
