/** The Slurm CLI transport: `sbatch`, `squeue`, `sacct` (`-c`), `scancel` through a {@link CommandRunner}. */
import { CairnError } from '@cairn/core';
import { runChecked, type CommandResult, type CommandRunner, type CommandRunOptions } from '@cairn/grid';
import { sbatchArgs, type SubmitSpec } from './sbatch.js';
import { normalizeState, slurmInfo } from './states.js';
import type { SlurmJobInfo, SlurmStats, SlurmTransport } from './transport.js';
import type { SlurmExecutorOptions } from './options.js';

const INVALID_ID = /Invalid job id/i;

/** The error for a Slurm command that could not run or failed. */
export function commandError(argv: readonly string[], r: CommandResult, what: string): CairnError {
  const cmd = argv.join(' ');
  const detail = (r.stderr || r.stdout).trim().split('\n').slice(-10).join('\n');
  const hint =
    r.code === 127
      ? `${argv[0]} was not found: install the Slurm client tools on this host (or the login node), or use transport: 'rest'.`
      : /Unable to contact slurm controller|Connection refused|Zero Bytes were transmitted|Socket timed out|fetch_config|Could not establish a configuration source/i.test(detail)
        ? 'The Slurm controller is unreachable: check that slurmctld runs and SLURM_CONF points at the right slurm.conf.'
        : 'Check the command and its stderr above.';
  return new CairnError('CAIRN_REMOTE', `${what} failed: \`${cmd}\` exited with ${r.code}: ${detail || '(no output)'}. ${hint}`, { retryable: r.code !== 127 });
}

function parseExit(text: string | undefined): number | undefined {
  const m = /^(\d+):(\d+)$/.exec(text ?? '');
  return m ? Number(m[1]) : undefined;
}

/** Creates the CLI transport. */
export function cliTransport(exec: CommandRunner, stats: SlurmStats, options: SlurmExecutorOptions): SlurmTransport {
  // Without slurmdbd `sacct` exits 1; then `sacct -c` reads the job-completion log.
  let accounting: boolean | undefined;
  const run = (argv: string[], what: string, ok?: (r: CommandResult) => boolean, options?: CommandRunOptions): Promise<CommandResult> => runChecked(exec, argv, what, (r) => commandError(argv, r, what), ok, options);

  const sacct = async (ids: readonly string[], completionLog: boolean): Promise<CommandResult> => {
    stats.sacctCalls++;
    const argv = ['sacct', ...(completionLog ? ['-c'] : []), '-n', '-P', '-X', '-j', ids.join(','), '-o', 'JobID,State,ExitCode'];
    return exec.run(argv).catch((cause: unknown) => ({ code: 1, stdout: '', stderr: String(cause) }));
  };

  return {
    kind: 'cli',
    async submit(spec) {
      stats.sbatchCalls++;
      const argv = ['sbatch', ...sbatchArgs(spec, options), spec.scriptPath];
      // --export=ALL: the runner's variables that hold a secret's value stay behind.
      const r = await run(argv, 'Submitting a Slurm job', undefined, { unsetEnv: spec.hideEnv });
      const id = r.stdout.trim().split(';')[0] ?? '';
      if (!/^\d+(_\d+)?$/.test(id)) throw commandError(argv, { ...r, code: r.code, stderr: `unexpected output: ${r.stdout}` }, 'Submitting a Slurm job');
      return id;
    },
    async query(ids) {
      const out = new Map<string, SlurmJobInfo>();
      if (ids.length === 0) return out;
      stats.squeueCalls++;
      // `-r`: one line per array task (`123_4`), pending ones too.
      const r = await run(['squeue', '-h', '-r', '-t', 'all', '-j', ids.join(','), '-o', '%i|%T|%r'], 'Checking Slurm jobs', (x) => x.code === 0 || INVALID_ID.test(x.stderr));
      for (const line of r.stdout.split('\n')) {
        const [id, state, reason] = line.trim().split('|');
        if (id && state) out.set(id, slurmInfo(normalizeState(state), reason));
      }
      return out;
    },
    async finished(ids) {
      const out = new Map<string, SlurmJobInfo>();
      if (ids.length === 0) return out;
      let r: CommandResult | undefined;
      if (accounting !== false) {
        r = await sacct(ids, false);
        if (accounting === undefined) accounting = r.code === 0;
      }
      if (accounting === false) r = await sacct(ids, true);
      if (!r || r.code !== 0) return out;
      for (const line of r.stdout.split('\n')) {
        const [id, state, exit] = line.trim().split('|');
        // The completion log keeps every run of a reused id: the last line wins.
        // (`sacct -c` names array tasks by their own job ids: they do not match and are left out.)
        if (id && state && ids.includes(id)) out.set(id, slurmInfo(normalizeState(state), undefined, parseExit(exit)));
      }
      return out;
    },
    async cancel(ids) {
      if (ids.length === 0) return;
      stats.scancelCalls++;
      await run(['scancel', ...ids], 'Cancelling Slurm jobs', (x) => x.code === 0 || INVALID_ID.test(x.stderr));
    },
  };
}
