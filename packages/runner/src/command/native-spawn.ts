/**
 * Starting a program through `@cairn/native`'s `spawnGroup`: `posix_spawn`, a vfork-style clone,
 * where Node's `spawn` forks this process, whose every page touched afterwards then takes a
 * copy-on-write fault (bench row "local, 1 at a time" of command.bench.mjs; tools/bench/README.md,
 * "Command steps: overhead against a bare spawn"). The child gets what Node's `spawn` with
 * `detached: true` and `stdio: ['ignore', out, err]` gives it; errors are Node's too (an `Error`
 * with the errno `code`, `ENOENT` or `EACCES`), thrown at once. Without the native module (or
 * with CAIRN_NATIVE=0, or off Linux) {@link nativeSpawn} is false and Node's spawn is used.
 */
import { constants } from 'node:os';
import { getSystemErrorName } from 'node:util';
import native from '@cairn/native';

const binding = native.binding;
const spawnGroup = binding?.spawnGroupAvailable?.() === true ? binding.spawnGroup : undefined;

/** True when programs whose output goes to files are started without forking this process. */
export const nativeSpawn = spawnGroup !== undefined;

const signalNames = new Map(Object.entries(constants.signals).map(([name, n]) => [n, name as NodeJS.Signals]));

/** What {@link spawnNative} starts. */
export interface NativeLaunch {
  readonly program: string;
  readonly args: readonly string[];
  readonly cwd: string;
  /** The whole environment (`undefined` values are left out, as Node's spawn does). */
  readonly env: NodeJS.ProcessEnv;
  /** Descriptors its stdout and stderr go to (duplicated: the caller may close them at once). */
  readonly stdout: number;
  readonly stderr: number;
}

/**
 * Starts `launch` as the leader of a new session and process group; its pid, and `onExit` is
 * called once when it has ended (the event loop stays alive until then). `undefined` when it
 * cannot go this way: a NUL byte in an argument, a variable or `cwd`, which Node's spawn
 * rejects with its own error. Throws the spawn error (`code` `ENOENT`, `EACCES`…).
 */
export function spawnNative(launch: NativeLaunch, onExit: (code: number | null, signal: NodeJS.Signals | null) => void): number | undefined {
  if (spawnGroup === undefined) return undefined;
  const argv = [launch.program, ...launch.args];
  const vars: string[] = [];
  for (const key in launch.env) {
    const value = launch.env[key];
    if (value !== undefined) vars.push(`${key}=${value}`);
  }
  if (hasNul(argv) || hasNul(vars) || launch.cwd.includes('\0')) return undefined;
  const rc = spawnGroup(argv.join('\0'), launch.cwd, vars.join('\0'), launch.stdout, launch.stderr, (code, signal) => {
    onExit(code >= 0 ? code : null, signal > 0 ? (signalNames.get(signal) ?? null) : null);
  });
  if (rc < 0) throw spawnError(launch, rc);
  return rc;
}

function hasNul(list: readonly string[]): boolean {
  for (const s of list) if (s.includes('\0')) return true;
  return false;
}

/** The error Node's spawn gives for errno `-rc`: `spawn <program> ENOENT`, with `errno`, `code`, `syscall`, `path`, `spawnargs`. */
function spawnError(launch: NativeLaunch, rc: number): NodeJS.ErrnoException {
  const code = getSystemErrorName(rc);
  return Object.assign(new Error(`spawn ${launch.program} ${code}`), { errno: rc, code, syscall: `spawn ${launch.program}`, path: launch.program, spawnargs: [...launch.args] });
}
