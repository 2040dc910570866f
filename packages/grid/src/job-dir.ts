/**
 * Creating job directories and writing the files a job reads. Every directory a grid job uses
 * (a step's attempt directory, its log directories, a pack directory) is made by
 * {@link createJobDir}, so a rule about them (modes, ownership checks) is written once.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { encodeTask } from '@cairn/core';
import type { JobFiles } from './files.js';
import type { JobRequest } from './runner-api.js';

/** Creates a directory a job uses (and its parents). */
export async function createJobDir(path: string): Promise<void> {
  await mkdir(path, { recursive: true });
}

/** Writes a file a job reads (`mode` 0o755 for scripts). */
export async function writeJobFile(path: string, data: string | Uint8Array, mode = 0o644): Promise<void> {
  await writeFile(path, data, { mode });
}

/** Prepares one step attempt: its directory, its log directories and its encoded task. */
export async function prepareAttempt(job: JobRequest, files: JobFiles): Promise<void> {
  await createJobDir(files.dir);
  await createJobDir(dirname(job.logPaths.stdout));
  await createJobDir(dirname(job.logPaths.stderr));
  await writeJobFile(files.task, encodeTask(job.task));
}
