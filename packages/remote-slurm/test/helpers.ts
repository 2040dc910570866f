/** The Slurm tests' JobRequests and recording host: the grid tests' own (tools/testenv/grid-jobs.ts). */
import { jobFor as gridJobFor, tempRoot as gridTempRoot, type JobForOptions } from '../../../tools/testenv/grid-jobs.js';
import type { JobRequest } from '../src/runner-api.js';

export { RecordingHost, workerEntry } from '../../../tools/testenv/grid-jobs.js';

/** `file://` URL of the fixture steps module. */
export const STEPS = new URL('./fixtures/steps.mjs', import.meta.url).href;

/** A JobRequest for `exportName` of the fixtures, with fresh directories under `root`. */
export function jobFor(root: string, exportName: string, options: Omit<JobForOptions, 'steps'> = {}): JobRequest {
  return gridJobFor(root, exportName, { ...options, steps: STEPS });
}

/** A fresh temp directory. */
export function tempRoot(): string {
  return gridTempRoot('cairn-slurm-test-');
}
