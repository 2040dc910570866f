import { CairnError } from '@cairn/core';

/** One failed step of a run. */
export interface StepFailure {
  /** The step's name. */
  readonly step: string;
  /** The step's output path. */
  readonly path: string;
  /** The original thrown value, or a `CairnError` (timeout, lease lost, previous failure…) wrapping it as `cause`. */
  readonly error: unknown;
}

function describe(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

/**
 * Raised by `StepRunner.run` when one or more steps failed. `failures` lists every failed
 * step (dependents that did not run because of them are not failures); `cause` is the first.
 */
export class StepRunError extends CairnError {
  /** Every failed step, in the order they failed. */
  readonly failures: readonly StepFailure[];
  /** Steps that did not run because a dependency failed. */
  readonly depFailed: number;

  constructor(failures: readonly StepFailure[], depFailed = 0) {
    const first = failures[0];
    const names = failures.slice(0, 5).map((f) => `${f.step}: ${describe(f.error)}`);
    const more = failures.length > 5 ? `\n  …and ${failures.length - 5} more` : '';
    const skipped = depFailed > 0 ? ` (${depFailed} dependent step(s) did not run)` : '';
    super(
      'CAIRN_STEP_FAILED',
      `${failures.length} step(s) failed${skipped}:\n  ${names.join('\n  ')}${more}\nFix the cause and rerun: finished steps are not run again.`,
      { step: first?.step, cause: first?.error },
    );
    this.name = 'StepRunError';
    this.failures = Object.freeze([...failures]);
    this.depFailed = depFailed;
  }
}
