/** `thrown` (tools/testenv) typed for core's errors. */
import { thrown as thrownAs } from '../../../../tools/testenv/thrown.js';
import type { CairnError } from '../../src/index.js';

/** Calls `f` and returns what it threw; fails the test when it returns normally. */
export const thrown = (f: () => unknown): CairnError => thrownAs<CairnError>(f);
