/**
 * How CLI transports run scheduler commands (`sbatch`, `qsub`…). The local runner uses
 * `execFile` (argv, never a shell string); `sshCommandRunner` runs the same argv on a login node.
 */
import { execFile } from 'node:child_process';
import { CairnError } from '@cairn/core';

/** Outcome of one command. */
export interface CommandResult {
  /** Exit code; `127` when the program was not found (like a shell). */
  readonly code: number;
  /** Standard output, as text. */
  readonly stdout: string;
  /** Standard error, as text. */
  readonly stderr: string;
}

/** Runs one command given as argv (`argv[0]` is the program). */
export interface CommandRunner {
  /** Runs `argv`, optionally feeding `input` on stdin and adding `env`. Resolves with any exit code; rejects only when the transport itself fails. */
  run(argv: readonly string[], options?: CommandRunOptions): Promise<CommandResult>;
}

/** Options of one {@link CommandRunner.run}. */
export interface CommandRunOptions {
  /** Fed on stdin. @default nothing */
  readonly input?: string;
  /** Added to the command's environment. @default {} */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * Variables of this process's environment the command must not inherit: ones that hold a
   * secret's value, which `sbatch --export=ALL` / `qsub -V` would otherwise copy into the job
   * (and Grid Engine shows in `qstat -j`). @default []
   */
  readonly unsetEnv?: readonly string[];
}

/** Options of {@link localCommandRunner}. */
export interface LocalCommandRunnerOptions {
  /** Extra environment for every command (e.g. `SLURM_CONF`, `SGE_ROOT`). */
  readonly env?: Readonly<Record<string, string>>;
  /** Kills a command that runs longer than this. @default 60000 */
  readonly timeoutMs?: number;
}

/** Runs commands on this host with `child_process.execFile`. */
export function localCommandRunner(options: LocalCommandRunnerOptions = {}): CommandRunner {
  return {
    run(argv, runOptions = {}) {
      const [file, ...args] = argv;
      if (file === undefined) return Promise.reject(new TypeError('CommandRunner.run: argv is empty'));
      return new Promise((resolve) => {
        const child = execFile(
          file,
          args,
          {
            env: withoutKeys({ ...process.env, ...options.env, ...runOptions.env }, runOptions.unsetEnv),
            timeout: options.timeoutMs ?? 60_000,
            maxBuffer: 64 * 1024 * 1024,
            encoding: 'utf8',
          },
          (err, stdout, stderr) => {
            if (!err) return resolve({ code: 0, stdout, stderr });
            const e = err as NodeJS.ErrnoException & { code?: unknown; killed?: boolean; signal?: string | null };
            if (e.code === 'ENOENT') return resolve({ code: 127, stdout, stderr: `${file}: command not found` });
            const code = typeof e.code === 'number' ? e.code : 1;
            const extra = e.killed ? `\n${file}: killed (${e.signal ?? 'timeout'})` : '';
            resolve({ code, stdout, stderr: stderr + extra });
          },
        );
        if (runOptions.input !== undefined) child.stdin?.end(runOptions.input);
        else child.stdin?.end();
      });
    },
  };
}

function withoutKeys(env: NodeJS.ProcessEnv, keys: readonly string[] | undefined): NodeJS.ProcessEnv {
  if (keys === undefined || keys.length === 0) return env;
  for (const k of keys) delete env[k];
  return env;
}

/** `value` when a positive integer (or `fallback` when undefined); else `CAIRN_CONFIG`. */
export function positiveInt(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1) throw new CairnError('CAIRN_CONFIG', `${name} must be a positive integer (got ${String(value)}).`);
  return value;
}

/**
 * Runs `argv` for `what` (e.g. "Submitting a Slurm job"): a runner that cannot run it at all
 * becomes a retryable `CAIRN_REMOTE`; a result `ok` refuses (default: a non-zero exit) becomes
 * `fail(result)`, the scheduler's own error with its hints.
 */
export async function runChecked(
  exec: CommandRunner,
  argv: string[],
  what: string,
  fail: (r: CommandResult) => Error,
  ok: (r: CommandResult) => boolean = (r) => r.code === 0,
  options?: CommandRunOptions,
): Promise<CommandResult> {
  let r: CommandResult;
  try {
    r = await exec.run(argv, options);
  } catch (cause) {
    throw new CairnError('CAIRN_REMOTE', `${what} failed: \`${argv.join(' ')}\` could not run: ${(cause as Error).message}`, { cause, retryable: true });
  }
  if (!ok(r)) throw fail(r);
  return r;
}
