/**
 * A program started in its own process group, so stopping it stops everything it started
 * (a `sleep` a script spawned, `torchrun`'s workers): SIGTERM to the group, SIGKILL after a
 * grace period. Every live group is known to this module, so a worker about to die can take
 * them with it ({@link killAllGroups}).
 */
import { type ChildProcess, spawn, type StdioOptions } from 'node:child_process';

/** How a started program ended. */
export interface GroupExit {
  /** Exit code, or `null` when a signal ended it. */
  readonly code: number | null;
  /** The signal that ended it, or `null`. */
  readonly signal: NodeJS.Signals | null;
  /** Processes of its group outlived the leader (they were killed then); false: the group was empty. */
  readonly leftovers: boolean;
}

/** What {@link startGroup} needs. */
export interface StartOptions {
  readonly program: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  readonly stdio: StdioOptions;
}

/** A running program's process group. */
export interface Group {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Resolves when the program (the group leader) exits; the rest of its group is killed then. */
  readonly exited: Promise<GroupExit>;
  /** SIGTERM to the group, SIGKILL after `graceMs` if the leader has not exited by then. */
  stop(graceMs: number): void;
}

const live = new Set<number>();

/** Signals a whole process group; false when it is already gone (not an error). */
export function signalGroup(pid: number, signal: NodeJS.Signals): boolean {
  // ESRCH is the usual answer (the group left with its leader): its error is thrown away, so V8
  // need not capture the step's stack for it (bench row "local, 1 at a time" of command.bench.mjs).
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    process.kill(-pid, signal);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
    return false;
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** SIGKILLs every group this module started and that is still running (a dying worker's last act). */
export function killAllGroups(): void {
  for (const pid of live) signalGroup(pid, 'SIGKILL');
  live.clear();
}

/**
 * Starts `program` (no shell) as the leader of a new process group: the group at once when it
 * started (nothing to wait for: bench row "local, 1 at a time" of command.bench.mjs), else a
 * promise that rejects with the spawn error (`ENOENT`, `EACCES`), which Node reports a tick later.
 */
export function startGroup(options: StartOptions): Group | Promise<Group> {
  const child = spawn(options.program, options.args as string[], { cwd: options.cwd, env: options.env, stdio: options.stdio, detached: true });
  // A program that could not be started has no pid.
  if (child.pid === undefined) {
    return new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', reject);
    }).then(() => group(child));
  }
  return group(child);
}

/** The group of `child`, a started process. */
function group(child: ChildProcess): Group {
  // A later error (a failed kill) must not crash the process; the exit is what counts.
  child.on('error', () => undefined);
  const pid = child.pid as number;
  live.add(pid);
  let killTimer: NodeJS.Timeout | undefined;
  const exited = new Promise<GroupExit>((resolve) => {
    child.once('exit', (code, signal) => {
      clearTimeout(killTimer);
      // Whatever the program left running goes with it.
      const leftovers = signalGroup(pid, 'SIGKILL');
      live.delete(pid);
      resolve({ code, signal, leftovers });
    });
  });
  let stopping = false;
  return {
    child,
    pid,
    exited,
    stop(graceMs) {
      if (stopping || !live.has(pid)) return;
      stopping = true;
      signalGroup(pid, 'SIGTERM');
      killTimer = setTimeout(() => signalGroup(pid, 'SIGKILL'), graceMs);
      killTimer.unref();
    },
  };
}
