/**
 * The attempt directory a Slurm job runs from holds its wrapper script (which Slurm executes as
 * the user) and its task (the step's inputs). Whoever can write it can run code as the user, so
 * it is created with mode 0700, and an existing one is used only when it is a real directory
 * (not a symlink) owned by this user and not writable by group or others: the same rule as the
 * SSH executor's work directory. Its files are created 0600 (the script 0700).
 */
import { lstat, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { CairnError } from '@cairn/core';

/** Creates (0700) or checks the attempt directory `dir` of step `step`; throws `CAIRN_UNSAFE_DIR` naming it and the fix. */
export async function prepareJobDir(dir: string, step: string): Promise<void> {
  await mkdir(dirname(dir), { recursive: true });
  try {
    await mkdir(dir, { mode: 0o700 });
    return;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const st = await lstat(dir);
  const uid = process.getuid?.();
  const why = st.isSymbolicLink()
    ? 'is a symbolic link'
    : !st.isDirectory()
      ? 'is not a directory'
      : uid !== undefined && st.uid !== uid
        ? `is owned by uid ${st.uid}, not by this user (uid ${uid})`
        : (st.mode & 0o022) !== 0
          ? `is writable by ${(st.mode & 0o002) !== 0 ? 'other users' : 'its group'} (mode ${(st.mode & 0o777).toString(8)})`
          : undefined;
  if (why === undefined) return;
  throw new CairnError(
    'CAIRN_UNSAFE_DIR',
    `Step "${step}": refusing the Slurm job directory ${dir}: it ${why}, so someone else could change the job script or task it runs. Remove it (the runner makes a fresh one, mode 0700) and check who can write the store.`,
    { step },
  );
}
