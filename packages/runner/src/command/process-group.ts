/**
 * A program started in its own process group, so stopping it stops everything it started
 * (a `sleep` a script spawned, `torchrun`'s workers): SIGTERM to the group, SIGKILL after a
 * grace period. Every live group is known to this module, so a worker about to die can take
 * them with it ({@link killAllGroups}).
 */
import { type ChildProcess, spawn, type StdioOptions } from 'node:child_process';
import { once } from 'node:events';
import type { Readable } from 'node:stream';
import { nativeSpawn, spawnNative } from './native-spawn.js';

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
  /**
   * Descriptors of the files the program's stdout and stderr go to (duplicated: the caller may
   * close its own once the group has started); absent: both are piped to this process
   * ({@link Group.pipes}). Its stdin is /dev/null either way.
   */
  readonly output?: { readonly stdout: number; readonly stderr: number };
}

/** The program's output, when it is piped to this process. */
export interface GroupPipes {
  readonly stdout: Readable;
  readonly stderr: Readable;
  /** Resolves when both have ended (everything the program wrote has been read). */
  readonly closed: Promise<unknown>;
}

/** A running program's process group. */
export interface Group {
  readonly pid: number;
  /** Its stdout and stderr, when no `output` files were given. */
  readonly pipes?: GroupPipes;
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
 * Starts `program` (no shell) as the leader of a new session and process group: the group at
 * once when it started (nothing to wait for: bench row "local, 1 at a time" of
 * command.bench.mjs), else a promise that rejects with the spawn error (`ENOENT`, `EACCES`),
 * which Node reports a tick later. Output to files goes through `@cairn/native`'s spawn when it is
 * there (native-spawn.ts: no fork of this process; its errors are thrown at once); piped output,
 * and every start without it, through Node's.
 */
export function startGroup(options: StartOptions): Group | Promise<Group> {
  const { output } = options;
  if (output !== undefined && nativeSpawn) {
    let ended: ((code: number | null, signal: NodeJS.Signals | null) => void) | undefined;
    const pid = spawnNative({ ...options, ...output }, (code, signal) => ended?.(code, signal));
    if (pid !== undefined) {
      const g = group(pid, undefined);
      ended = g.ended;
      return g.group;
    }
  }
  const stdio: StdioOptions = output === undefined ? ['ignore', 'pipe', 'pipe'] : ['ignore', output.stdout, output.stderr];
  const child = spawn(options.program, options.args as string[], { cwd: options.cwd, env: options.env, stdio, detached: true });
  // A program that could not be started has no pid.
  if (child.pid === undefined) {
    return new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', reject);
    }).then(() => nodeGroup(child, output === undefined));
  }
  return nodeGroup(child, output === undefined);
}

/** The group of `child`, a program Node's spawn started. */
function nodeGroup(child: ChildProcess, piped: boolean): Group {
  // A later error (a failed kill) must not crash the process; the exit is what counts.
  child.on('error', () => undefined);
  const pipes = piped ? { stdout: child.stdout as Readable, stderr: child.stderr as Readable, closed: once(child, 'close') } : undefined;
  const { group: g, ended } = group(child.pid as number, pipes);
  child.once('exit', ended);
  return g;
}

/** The group led by `pid`, and what to call when the leader has exited. */
function group(pid: number, pipes: GroupPipes | undefined): { group: Group; ended: (code: number | null, signal: NodeJS.Signals | null) => void } {
  live.add(pid);
  let killTimer: NodeJS.Timeout | undefined;
  let resolveExit: (exit: GroupExit) => void = () => undefined;
  const exited = new Promise<GroupExit>((resolve) => {
    resolveExit = resolve;
  });
  const ended = (code: number | null, signal: NodeJS.Signals | null) => {
    clearTimeout(killTimer);
    // Whatever the program left running goes with it.
    const leftovers = signalGroup(pid, 'SIGKILL');
    live.delete(pid);
    resolveExit({ code, signal, leftovers });
  };
  let stopping = false;
  const g: Group = {
    pid,
    pipes,
    exited,
    stop(graceMs) {
      if (stopping || !live.has(pid)) return;
      stopping = true;
      signalGroup(pid, 'SIGTERM');
      killTimer = setTimeout(() => signalGroup(pid, 'SIGKILL'), graceMs);
      killTimer.unref();
    },
  };
  return { group: g, ended };
}
