/**
 * The objects of one step under `{prefix}/{step path}/`: the same names and formats as the
 * filesystem store's files inside an output directory, plus the lease and the job in flight,
 * which on an object store live under the step path too (there is no directory to replace, so
 * nothing needs to sit beside it).
 */
import { MARIN_LOCK_FILE, RECORD_FILE, STATUS_FILE } from '@cairn/runner/store';

export { RECORD_FILE, STATUS_FILE };
/** The lease: Marin's lock object name and a Cairn holder (a superset of Marin's). */
export const LEASE_FILE = MARIN_LOCK_FILE;
/** The job in flight of a resumable executor. */
export const JOB_FILE = '.cairn/job.json';
