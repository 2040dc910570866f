/**
 * What happens after an attempt: a pure decision, table-tested (test/retry-policy.test.ts).
 *
 * - A success is committed, whatever else happened meanwhile (the commit's fence still refuses
 *   it if the lease was lost).
 * - A lost lease: the step belongs to another runner now, so nothing is written.
 * - A cancellation is recorded as CANCELLED.
 * - An infrastructure failure (the executor says so, or lost the job) is retried without
 *   spending the step's own retries, `infraRetries` times; after that it counts as a failure.
 * - A failure or a timeout is retried while the step has retries left.
 */

/** How one attempt ended (also what the record's attempt list says). */
export type AttemptEnd =
  /** The step function returned. */
  | 'succeeded'
  /** It threw, or its process failed. */
  | 'failed'
  /** It exceeded `timeoutMs`. */
  | 'timeout'
  /** It was cancelled (signal, Ctrl-C, an external cancel of its job). */
  | 'cancelled'
  /** Another runner took its lease over. */
  | 'lease-lost'
  /** The executor lost track of the job (host gone, job vanished). */
  | 'lost';

/** One attempt's end, as the policy sees it. */
export interface AttemptOutcome {
  /** How it ended. */
  readonly end: AttemptEnd;
  /** The executor reported an infrastructure fault (node failure, preemption). */
  readonly infrastructure: boolean;
}

/** The step's attempts so far in this run. */
export interface RetryHistory {
  /** Attempts made, including the one just ended. */
  readonly attempts: number;
  /** Of them, infrastructure failures that were retried without spending the step's retries. */
  readonly infraRetries: number;
}

/** The limits that apply to a step. */
export interface RetryLimits {
  /** The step's own retries (`spec.retries`). */
  readonly retries: number;
  /** Infrastructure retries that do not spend the step's own (runner option `infraRetries`). */
  readonly infraRetries: number;
}

/** What to do next. */
export type Decision =
  /** Commit SUCCESS. */
  | 'succeed'
  /** Another attempt, spending one of the step's retries. */
  | 'retry'
  /** Another attempt, not spending the step's retries (an infrastructure fault). */
  | 'retry-infra'
  /** Commit FAILED. */
  | 'fail'
  /** Commit CANCELLED. */
  | 'cancel'
  /** Write nothing: the lease is another runner's. */
  | 'abandon';

/** The decision after an attempt (see the module comment). */
export function decide(outcome: AttemptOutcome, history: RetryHistory, limits: RetryLimits): Decision {
  switch (outcome.end) {
    case 'succeeded':
      return 'succeed';
    case 'lease-lost':
      return 'abandon';
    case 'cancelled':
      return 'cancel';
    default: {
      const infra = outcome.end === 'lost' || outcome.infrastructure;
      if (infra && history.infraRetries < limits.infraRetries) return 'retry-infra';
      return history.attempts - history.infraRetries > limits.retries ? 'fail' : 'retry';
    }
  }
}
