/**
 * The directory of the login-node transport's ssh multiplexing socket (`ControlPath`).
 *
 * Whoever can create the socket path before ssh does becomes the "master" every later command
 * goes through: `ssh -o ControlMaster=auto` connects to an existing socket without asking whose
 * it is, hands it the command line (with its `env K=V`, such as a `SLURM_JWT`) and believes the
 * exit code it answers. So the socket never sits at a guessable path in a shared directory: by
 * default it goes in a fresh `mkdtemp` directory (mode 0700, an unguessable name) under
 * `$XDG_RUNTIME_DIR` or the system temp directory, removed when the runner closes. A directory
 * the caller names is used only when it is this user's own real directory with no access for
 * group or others (created 0700 when missing); anything else is `CAIRN_UNSAFE_DIR`.
 */
import { rmSync } from 'node:fs';
import { constants } from 'node:fs';
import { access, lstat, mkdir, mkdtemp, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CairnError } from '@cairn/core';

/** A control directory: its path, and whether the runner made it (and so removes it). */
export interface ControlDir {
  /** The directory. */
  readonly path: string;
  /** Made by {@link controlDir} with `mkdtemp` (removed by {@link removeControlDir}); false for a caller's directory. */
  readonly temporary: boolean;
}

/** Why `path` may not hold the socket (`undefined`: it may). `st` from `lstat`. */
function unsafeReason(st: Awaited<ReturnType<typeof lstat>>, uid: number | undefined): string | undefined {
  if (st.isSymbolicLink()) return 'is a symbolic link';
  if (!st.isDirectory()) return 'is not a directory';
  if (uid !== undefined && st.uid !== uid) return `is owned by uid ${st.uid}, not by this user (uid ${uid})`;
  if ((Number(st.mode) & 0o077) !== 0) return `is open to ${(Number(st.mode) & 0o007) !== 0 ? 'other users' : 'its group'} (mode ${(Number(st.mode) & 0o777).toString(8)})`;
  return undefined;
}

const unsafe = (path: string, why: string, fix: string): CairnError =>
  new CairnError('CAIRN_UNSAFE_DIR', `Refusing ${path} for the ssh multiplexing socket: it ${why}, so another user could answer the runner's commands (and read their environment). ${fix}`);

/** A base for `mkdtemp`: we can write it, and another user cannot rename or replace what we create in it. */
async function usableBase(path: string, uid: number | undefined): Promise<boolean> {
  const st = await stat(path).catch(() => undefined);
  if (!st?.isDirectory()) return false;
  if (!(await access(path, constants.W_OK).then(() => true, () => false))) return false;
  if (uid === undefined) return true;
  if (st.uid !== uid && st.uid !== 0) return false;
  // Writable by others: only with the sticky bit (as /tmp), which keeps them off our entries.
  return (st.mode & 0o022) === 0 || (st.mode & 0o1000) !== 0;
}

const made = new Set<string>();
let exitHook = false;

/**
 * The directory for the socket: `configured` after checking it (created 0700 when missing), or a
 * fresh private one. Throws `CAIRN_UNSAFE_DIR` naming the directory and what to do.
 */
export async function controlDir(configured?: string): Promise<ControlDir> {
  const uid = process.getuid?.();
  if (configured !== undefined) {
    await mkdir(configured, { mode: 0o700 }).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
    });
    const why = unsafeReason(await lstat(configured), uid);
    if (why !== undefined) throw unsafe(configured, why, 'Name a directory of your own with mode 0700 (controlDir), or leave controlDir unset for a private temporary one.');
    return { path: configured, temporary: false };
  }
  const runtime = process.env.XDG_RUNTIME_DIR;
  const base = runtime && (await usableBase(runtime, uid)) ? runtime : tmpdir();
  if (!(await usableBase(base, uid))) {
    throw unsafe(base, 'is not a directory this user can write, or others can write it without the sticky bit', 'Point TMPDIR (or XDG_RUNTIME_DIR) at a directory of your own, or set controlDir.');
  }
  // mkdtemp makes the directory 0700 under a random name: nothing there to plant in advance.
  const path = await mkdtemp(join(base, 'cairn-ssh-'));
  made.add(path);
  if (!exitHook) {
    exitHook = true;
    // A runner that was never closed: its directory goes with the process (the master, if any, then exits at ControlPersist).
    process.once('exit', () => {
      for (const dir of made) rmSync(dir, { recursive: true, force: true });
    });
  }
  return { path, temporary: true };
}

/** Removes a directory made by {@link controlDir}; a caller's directory is left alone. */
export function removeControlDir(dir: ControlDir): void {
  if (!dir.temporary) return;
  made.delete(dir.path);
  rmSync(dir.path, { recursive: true, force: true });
}
