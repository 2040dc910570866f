/**
 * The job wrapper and its files: the grid core's (see @cairn/grid's wrapper.ts), plus where
 * Slurm itself writes a job's output (anything before the wrapper redirects).
 */
import { join } from 'node:path';
import { jobFiles as gridJobFiles, type JobFiles as GridJobFiles } from '@cairn/grid';

export { parseExitFile, shQuote, wrapperScript } from '@cairn/grid';
export type { WrapperInit } from '@cairn/grid';

/** Files of one attempt, all in the attempt directory. */
export interface JobFiles extends GridJobFiles {
  /** Slurm's own output of a job that runs this step alone. */
  readonly slurmOutput: string;
}

/** Slurm's output file pattern in `dir`: `slurm-<id>.out`, or `slurm-<array id>_<task>.out` for an array. */
export function slurmOutput(dir: string, array: boolean): string {
  return join(dir, array ? 'slurm-%A_%a.out' : 'slurm-%j.out');
}

/** The files of an attempt directory. */
export function jobFiles(dir: string): JobFiles {
  return { ...gridJobFiles(dir), slurmOutput: slurmOutput(dir, false) };
}
