/**
 * Creating job directories and writing the files a job reads. Every directory a grid job uses
 * (a step's attempt directory, its log directories, a pack directory) is made by
 * {@link createJobDir}, so a rule about them is written once:
 *
 * A job directory holds its wrapper script (which the scheduler executes as the user) and its
 * task (the step's inputs). Whoever can write it can run code as the user, so it is created with
 * mode 0700, and an existing one is used only when it is a real directory (not a symlink) owned
 * by this user and not writable by group or others: the same rule as the SSH executor's work
 * directory. Its files are created 0600 (scripts 0700).
 *
 * Where jobs run as another account of the same project group (a login node reached over ssh as
 * a service user, say), {@link JobAccess} `'group'` widens this to the group: directories 0770,
 * files 0660 (scripts 0770), and an existing directory may be group-writable but never writable
 * by others. Give the store directory that group and the setgid bit so new directories inherit it.
 */
import { lstat, mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { CairnError, encodeTask } from '@cairn/core';
import type { JobFiles } from './files.js';
import { secretsFileText, secretVars, type JobRequest } from './runner-api.js';

/** Who may write job directories and files: this user only, or also its group. */
export type JobAccess = 'user' | 'group';

const MODES = {
  user: { dir: 0o700, data: 0o600, script: 0o700, forbidden: 0o022 },
  group: { dir: 0o770, data: 0o660, script: 0o770, forbidden: 0o002 },
} as const satisfies Record<JobAccess, Record<string, number>>;

/** Creates (0700, or 0770 for `'group'`) or checks the job directory `path` (its parents as usual); throws `CAIRN_UNSAFE_DIR` naming it and the fix. */
export async function createJobDir(path: string, step?: string, access: JobAccess = 'user'): Promise<void> {
  const modes = MODES[access];
  await mkdir(dirname(path), { recursive: true });
  try {
    await mkdir(path, { mode: modes.dir });
    return;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const st = await lstat(path);
  const uid = process.getuid?.();
  const why = st.isSymbolicLink()
    ? 'is a symbolic link'
    : !st.isDirectory()
      ? 'is not a directory'
      : uid !== undefined && st.uid !== uid
        ? `is owned by uid ${st.uid}, not by this user (uid ${uid})`
        : (st.mode & modes.forbidden) !== 0
          ? `is writable by ${(st.mode & 0o002) !== 0 ? 'other users' : 'its group'} (mode ${(st.mode & 0o777).toString(8)})`
          : undefined;
  if (why === undefined) return;
  throw new CairnError(
    'CAIRN_UNSAFE_DIR',
    `${step === undefined ? '' : `Step "${step}": `}refusing the job directory ${path}: it ${why}, so someone else could change the job script or task it runs. Remove it (the runner makes a fresh one, mode ${modes.dir.toString(8)}) and check who can write the store.`,
    { step },
  );
}

/** Writes a file a job reads: 0600, or 0700 for a script the scheduler executes (0660/0770 for `'group'`). */
export async function writeJobFile(path: string, data: string | Uint8Array, kind: 'data' | 'script' = 'data', access: JobAccess = 'user'): Promise<void> {
  await writeFile(path, data, { mode: MODES[access][kind] });
}

/**
 * Prepares one step attempt: its directory, its log directories, its encoded task and, when the
 * step needs secrets, its secrets file (0600 in the 0700 attempt directory, never in the job
 * script or the scheduler's arguments; the wrapper or pack worker deletes it before the step starts).
 */
export async function prepareAttempt(job: JobRequest, files: JobFiles, access: JobAccess = 'user'): Promise<void> {
  const step = job.spec.name;
  await createJobDir(files.dir, step, access);
  await createJobDir(dirname(job.logPaths.stdout), step, access);
  await createJobDir(dirname(job.logPaths.stderr), step, access);
  await writeJobFile(files.task, encodeTask(job.task), 'data', access);
  const vars = secretVars(job.task, job.secrets);
  if (vars !== undefined) await writeJobFile(files.secrets, secretsFileText(vars, step), 'data', access);
}
