/**
 * What happens after an attempt: a pure decision, table-tested (test/retry-policy.test.ts).
 *
 * - A success is committed, whatever else happened meanwhile (the commit's fence still refuses
 *   it if the lease was lost).
 * - A lost lease: the step belongs to another runner now, so nothing is written.
 * - A cancellation is recorded as CANCELLED.
 * - A preemption (the executor says so: a scheduler's preemption, a spot interruption, a
 *   preemption exit code) is retried from `preemptionRetries`, with backoff
 *   ({@link preemptionBackoffMs}), spending neither the step's retries nor `infraRetries`;
 *   after that it counts as a failure.
 * - An infrastructure failure (the executor says so, or lost the job) is retried without
 *   spending the step's own retries, `infraRetries` times; after that it counts as a failure.
 * - A failure or a timeout is retried while the step has retries left.
 */
import type { AttemptEnd } from '../states.js';

export type { AttemptEnd };

/** One attempt's end, as the policy sees it. */
export interface AttemptOutcome {
  /** How it ended. */
  readonly end: AttemptEnd;
  /** The executor reported an infrastructure fault (node failure, lost host). */
  readonly infrastructure: boolean;
}

/** The step's attempts so far in this run. */
export interface RetryHistory {
  /** Attempts made, including the one just ended. */
  readonly attempts: number;
  /** Of them, infrastructure failures that were retried without spending the step's retries. */
  readonly infraRetries: number;
  /** Of them, preemptions that were retried without spending the step's retries. @default 0 */
  readonly preemptions?: number;
}

/** The limits that apply to a step. */
export interface RetryLimits {
  /** The step's own retries (`spec.retries`). */
  readonly retries: number;
  /** Infrastructure retries that do not spend the step's own (runner option `infraRetries`). */
  readonly infraRetries: number;
  /** Preempted attempts retried without spending the step's own (step or runner option `preemptionRetries`). @default 0 */
  readonly preemptionRetries?: number;
}

/** What to do next. */
export type Decision =
  /** Commit SUCCESS. */
  | 'succeed'
  /** Another attempt, spending one of the step's retries. */
  | 'retry'
  /** Another attempt, not spending the step's retries (an infrastructure fault). */
  | 'retry-infra'
  /** Another attempt after a backoff, spending one of `preemptionRetries` (a preemption). */
  | 'retry-preempted'
  /** Commit FAILED. */
  | 'fail'
  /** Commit CANCELLED. */
  | 'cancel'
  /** Write nothing: the lease is another runner's. */
  | 'abandon';

/**
 * The decision after an end that needs neither history nor limits (a success, a lost lease, a
 * cancellation); undefined for the others. The lifecycle asks it first: most attempts succeed,
 * and {@link decide}'s three argument objects cost ~100 B a step (bench row "scheduler overhead, 100k layered").
 */
export function decideAtOnce(end: AttemptEnd): Decision | undefined {
  switch (end) {
    case 'succeeded':
      return 'succeed';
    case 'lease-lost':
      return 'abandon';
    case 'cancelled':
      return 'cancel';
    default:
      return undefined;
  }
}

/** The decision after an attempt (see the module comment). */
export function decide(outcome: AttemptOutcome, history: RetryHistory, limits: RetryLimits): Decision {
  const atOnce = decideAtOnce(outcome.end);
  if (atOnce !== undefined) return atOnce;
  const preemptions = history.preemptions ?? 0;
  if (outcome.end === 'preempted' && preemptions < (limits.preemptionRetries ?? 0)) return 'retry-preempted';
  const infra = outcome.end === 'lost' || outcome.infrastructure;
  if (infra && history.infraRetries < limits.infraRetries) return 'retry-infra';
  // Retries that spent no budget of the step's own do not count against it.
  return history.attempts - history.infraRetries - preemptions > limits.retries ? 'fail' : 'retry';
}

/** The longest wait between preempted attempts. */
export const MAX_PREEMPTION_BACKOFF_MS = 300_000;

/** The wait before the attempt after the `n`-th preemption (1-based): `baseMs` doubled each time, at most 5 minutes. */
export function preemptionBackoffMs(n: number, baseMs: number): number {
  return Math.min(MAX_PREEMPTION_BACKOFF_MS, baseMs * 2 ** Math.min(Math.max(0, n - 1), 30));
}
