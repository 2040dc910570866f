import type { CairnError } from '@cairn/core';

/** The error `f` throws (fails the test when it returns normally). */
export function thrown(f: () => unknown): CairnError {
  try {
    f();
  } catch (err) {
    return err as CairnError;
  }
  throw new Error('expected an error, but the call returned normally');
}
