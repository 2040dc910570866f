import type { CairnError } from '@cairn/core';
import { thrown as thrownAs } from '../../../../tools/testenv/thrown.js';
import { StepRunError } from '../../src/errors.js';

/** The error `f` throws (fails the test when it returns normally). */
export const thrown = (f: () => unknown): CairnError => thrownAs<CairnError>(f);

/** The error `p` rejects with (fails the test when it resolves). */
export async function rejection(p: Promise<unknown>): Promise<CairnError> {
  return p.then(
    () => {
      throw new Error('expected a rejection, but the promise resolved');
    },
    (e: unknown) => e as CairnError,
  );
}

/** The `StepRunError` a run rejects with (fails the test when it resolves, or rejects with something else). */
export async function runError(p: Promise<unknown>): Promise<StepRunError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof StepRunError)) throw new Error(`expected the run to fail with a StepRunError, got ${String(err)}`);
  return err;
}
