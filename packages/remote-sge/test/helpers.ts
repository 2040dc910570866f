/** The Grid Engine tests' cell: the twin of remote-slurm's test/helpers.ts. */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll } from 'vitest';
import { tempRoot } from '../../../tools/testenv/grid-jobs.js';
import { missingSgeBinaries, startSge, type SgeCell, type StartSgeOptions } from '../../../tools/testenv/sge.js';

/** True when Grid Engine is not installed here (the SGE tests are then skipped; on CI they never are). */
export const skipSge = missingSgeBinaries().length > 0 && !process.env.CI;

/** A test file's Grid Engine cell and scratch directory, set up by {@link useSgeCell}. */
export interface SgeTestBed {
  /** The running cell (once the file's `beforeAll` ran). */
  readonly cell: SgeCell;
  /** A fresh temp directory, removed after the file's tests. */
  readonly root: string;
}

/**
 * Starts a real Grid Engine cell before the enclosing `describe`'s tests and stops it (and
 * removes the scratch directory) after them. Call it inside the `describe`.
 */
export function useSgeCell(options: StartSgeOptions = {}, rootPrefix = 'cairn-sge-test-'): SgeTestBed {
  let cell: SgeCell | undefined;
  const root = tempRoot(rootPrefix);
  beforeAll(async () => {
    cell = await startSge(options);
  });
  afterAll(async () => {
    await cell?.stop();
    rmSync(root, { recursive: true, force: true });
  });
  return {
    get cell(): SgeCell {
      if (cell === undefined) throw new Error('useSgeCell: the cell is read before the beforeAll that starts it ran.');
      return cell;
    },
    root,
  };
}
