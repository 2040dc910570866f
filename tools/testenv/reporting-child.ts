/**
 * A child process a test starts, kills, pauses or races (the runner fixtures of the lease,
 * checkpoint and S3 suites), which reports its outcome on one `DONE {json}` line: its output
 * so far, and that outcome once it exits.
 */
import { type ChildProcess, spawn } from 'node:child_process';

/** A started child and what it reports. */
export interface ReportingChild<T> {
  readonly proc: ChildProcess;
  /**
   * The JSON of its `DONE` line once it has exited; without one, `ok: false` with the end of its
   * output in `message` and all of it in `output`.
   */
  readonly done: Promise<T>;
  /** Its stdout and stderr so far. */
  readonly output: () => string;
}

/** Starts `command args` (stdout and stderr collected together) in `env`. */
export function spawnReporting<T = Record<string, unknown>>(command: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env): ReportingChild<T> {
  const proc = spawn(command, args as string[], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const done = new Promise<T>((resolve) =>
    proc.on('exit', () => {
      const line = out.split('\n').find((l) => l.startsWith('DONE '));
      resolve(line === undefined ? ({ ok: false, message: `no DONE line; output:\n${out.slice(-3000)}`, output: out } as T) : (JSON.parse(line.slice(5)) as T));
    }),
  );
  return { proc, done, output: () => out };
}
