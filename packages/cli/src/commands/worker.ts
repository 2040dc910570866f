/**
 * `cairn worker --task T --result R`: the entry remote executors start. Delegates to the
 * runner's built worker entry in a child process (same arguments, same exit codes, stdio
 * inherited); SIGTERM and SIGINT are passed on so the step can stop cleanly.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { workerEntryPath } from '@cairn/runner';
import type { CliContext } from '../context.js';
import { cliError } from '../errors.js';

/** Options of `cairn worker`. */
export interface WorkerCommandOptions {
  /** Task file (`encodeTask` bytes). */
  readonly task: string;
  /** Result file to write. */
  readonly result: string;
}

/** Runs one task; resolves with the worker entry's exit code. */
export async function workerCommand(ctx: CliContext, options: WorkerCommandOptions): Promise<number> {
  const entry = workerEntryPath();
  if (!existsSync(entry)) {
    throw cliError('CAIRN_EXECUTOR', `The runner's worker entry ${entry} does not exist.`, 'Build @cairn/runner (npx tsup in packages/runner).');
  }
  const child = spawn(process.execPath, [entry, '--task', options.task, '--result', options.result], { stdio: 'inherit', env: ctx.env, cwd: ctx.cwd });
  const forward = (sig: NodeJS.Signals) => () => void child.kill(sig);
  const onTerm = forward('SIGTERM');
  const onInt = forward('SIGINT');
  process.on('SIGTERM', onTerm);
  process.on('SIGINT', onInt);
  try {
    return await new Promise<number>((resolve, reject) => {
      child.on('error', reject);
      child.on('exit', (code, signal) => resolve(code ?? (signal === 'SIGTERM' ? 143 : signal === 'SIGINT' ? 130 : 1)));
    });
  } finally {
    process.off('SIGTERM', onTerm);
    process.off('SIGINT', onInt);
  }
}
