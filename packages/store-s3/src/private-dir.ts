/**
 * This user's private directories for what the store keeps on the local disk by default (staged
 * attempts, inputs when there is no cache directory). A path in a shared directory such as /tmp
 * is guessable: another local user can create it first (then read what is staged there, or plant
 * a file that gets uploaded) or put a symlink there. So the default root is per user
 * (`{tmpdir}/cairn-s3-{uid}`), created 0700, and when it already exists it must be a real
 * directory owned by this user that nobody else can enter; anything else is refused with
 * `CAIRN_UNSAFE_DIR` naming the path, never repaired (a planted path is someone's attack).
 */
import { lstat, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CairnError } from '@cairn/core';

/** The default per-user root in the OS temp directory (not created here). */
export function defaultPrivateRoot(): string {
  return join(tmpdir(), `cairn-s3-${process.getuid?.() ?? 'user'}`);
}

/** Why `path` (as lstat saw it) is not a directory only this user can use, or undefined when it is. */
function unsafeBecause(st: Awaited<ReturnType<typeof lstat>>, forbidden: number): string | undefined {
  const uid = process.getuid?.();
  if (st.isSymbolicLink()) return 'is a symbolic link';
  if (!st.isDirectory()) return 'is not a directory';
  if (uid !== undefined && Number(st.uid) !== uid) return `is owned by uid ${st.uid}, not by this user (uid ${uid})`;
  if ((Number(st.mode) & forbidden) !== 0) return `can be used by other users (mode ${(Number(st.mode) & 0o777).toString(8)})`;
  return undefined;
}

/**
 * Creates `path` (0700) or checks the one that exists: a directory, not a symlink, owned by this
 * user, and (`strict`, the default roots) closed to group and others; else (a root the user
 * chose, maybe shared with cluster nodes) at least not writable by them.
 */
export async function ensurePrivateDir(path: string, what: string, strict = true): Promise<string> {
  const forbidden = strict ? 0o077 : 0o022;
  try {
    await mkdir(path, { mode: 0o700 });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      // Its parent is missing: a root the user chose (its parents are theirs to create).
      await mkdir(path, { recursive: true, mode: 0o700 });
    } else if (code !== 'EEXIST') throw err;
  }
  const why = unsafeBecause(await lstat(path), forbidden);
  if (why !== undefined) {
    throw new CairnError(
      'CAIRN_UNSAFE_DIR',
      `Refusing ${what} ${path}: it ${why}, so another user could read what is staged there or plant files that would be uploaded. Remove it (the store makes a fresh one, mode 700), or set the store's ${what === 'the input cache directory' ? 'cacheDir' : 'localRoot'} option to a directory of your own.`,
    );
  }
  return path;
}
