/** The Slurm tests' JobRequests and recording host (the grid tests' own, tools/testenv/grid-jobs.ts), and their cluster. */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll } from 'vitest';
import { jobFor as gridJobFor, tempRoot as gridTempRoot, type JobForOptions } from '../../../tools/testenv/grid-jobs.js';
import { missingSlurmBinaries, startSlurm, type SlurmCluster, type StartSlurmOptions } from '../../../tools/testenv/slurm.js';
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

/** True when Slurm is not installed here (the Slurm tests are then skipped; on CI they never are). */
export const skipSlurm = missingSlurmBinaries().length > 0 && !process.env.CI;

/** A test file's Slurm and scratch directory, set up by {@link useSlurmCluster}. */
export interface SlurmTestBed {
  /** The running cluster (once the file's `beforeAll` ran). */
  readonly cluster: SlurmCluster;
  /** A fresh temp directory, removed after the file's tests. */
  readonly root: string;
}

/**
 * Starts a real single-node Slurm before the enclosing `describe`'s tests and stops it (and
 * removes the scratch directory) after them. Call it inside the `describe`.
 */
export function useSlurmCluster(options: StartSlurmOptions = { rest: false }): SlurmTestBed {
  let cluster: SlurmCluster | undefined;
  const root = tempRoot();
  beforeAll(async () => {
    cluster = await startSlurm(options);
  });
  afterAll(async () => {
    await cluster?.stop();
    rmSync(root, { recursive: true, force: true });
  });
  return {
    get cluster(): SlurmCluster {
      if (cluster === undefined) throw new Error('useSlurmCluster: the cluster is read before the beforeAll that starts it ran.');
      return cluster;
    },
    root,
  };
}
