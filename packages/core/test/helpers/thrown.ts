/** The error a test expects `f` to throw, for asserting on its `code`, `step` and message. */
import type { CairnError } from '../../src/index.js';

/** Calls `f` and returns what it threw; fails the test when it returns normally. */
export function thrown(f: () => unknown): CairnError {
  try {
    f();
  } catch (err) {
    return err as CairnError;
  }
  throw new Error('expected an error, but the call returned normally');
}
