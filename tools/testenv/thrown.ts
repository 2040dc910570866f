/** The error a test expects `f` to throw, for asserting on its `code`, `step` and message. */

/** Calls `f` and returns what it threw (typed `E`, usually `CairnError`); fails the test when it returns normally. */
export function thrown<E = Error>(f: () => unknown): E {
  try {
    f();
  } catch (err) {
    return err as E;
  }
  throw new Error('expected an error, but the call returned normally');
}
