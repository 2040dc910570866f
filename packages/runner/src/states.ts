/**
 * The one table of step states: which are final, which count as success, what status each
 * leaves in the store and how it is labelled. The scheduler, the CLI's progress view, the report
 * and `clean` all read it instead of keeping their own subsets.
 */
import type { StatusToken } from './store/status.js';

/** A step's state during a run. */
export type StepState =
  /** Discovered; waiting for its dependencies or a free slot. */
  | 'pending'
  /** Another runner holds the step's lease; waiting without holding a slot. */
  | 'waiting-lease'
  /** An attempt is running on an executor. */
  | 'running'
  /** An attempt failed or was preempted and another one follows (`retries`, `infraRetries`, `preemptionRetries`). */
  | 'retrying'
  /** Ran in this run and recorded SUCCESS. */
  | 'succeeded'
  /** Failed (after its retries); recorded FAILED. */
  | 'failed'
  /** Did not run because a dependency failed; recorded DEP_FAILED. */
  | 'dep-failed'
  /** Stopped by cancellation (signal, SIGINT); a running step records CANCELLED. A rerun resumes. */
  | 'cancelled'
  /** Already built (recorded SUCCESS, output present): served from the store, not run. */
  | 'cached'
  /** Built by another runner while this one waited on its lease: counted completed, not run here. */
  | 'skipped';

/** States a step ends in. */
export type FinalStepState = 'succeeded' | 'failed' | 'dep-failed' | 'cancelled' | 'cached' | 'skipped';

/** What a state means. */
export interface StateInfo {
  /** The step is done for this run. */
  readonly final: boolean;
  /** Final and its output is there: dependents may run. */
  readonly ok: boolean;
  /** The status the state leaves in the store (null: none is written for it). */
  readonly stored: StatusToken | null;
  /** How a person reads it. */
  readonly label: string;
}

/** Every state, described once. */
export const STEP_STATES: Readonly<Record<StepState, StateInfo>> = Object.freeze({
  pending: { final: false, ok: false, stored: null, label: 'pending' },
  'waiting-lease': { final: false, ok: false, stored: null, label: 'waiting for another runner' },
  running: { final: false, ok: false, stored: null, label: 'running' },
  retrying: { final: false, ok: false, stored: null, label: 'retrying' },
  succeeded: { final: true, ok: true, stored: 'SUCCESS', label: 'built' },
  failed: { final: true, ok: false, stored: 'FAILED', label: 'failed' },
  'dep-failed': { final: true, ok: false, stored: 'DEP_FAILED', label: 'dependency failed' },
  cancelled: { final: true, ok: false, stored: 'CANCELLED', label: 'cancelled' },
  cached: { final: true, ok: true, stored: null, label: 'cached' },
  skipped: { final: true, ok: true, stored: null, label: 'built by another runner' },
});

/** The final states, in the order reports list them. */
export const FINAL_STATES: readonly FinalStepState[] = Object.freeze(['succeeded', 'cached', 'skipped', 'failed', 'dep-failed', 'cancelled']);

/** True for states a step ends in. */
export function isFinalState(state: StepState): state is FinalStepState {
  return STEP_STATES[state].final;
}

/** True for final states whose output dependents may use. */
export function isOkState(state: StepState): boolean {
  return STEP_STATES[state].ok;
}

/** How one attempt of a step ended (what the record's attempt list says, and what the retry policy reads). */
export type AttemptEnd =
  /** The step function (or program) returned. */
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
  | 'lost'
  /** It was preempted (spot interruption, a SIGTERM the runner did not send, a preemption exit code, a scheduler's preemption). */
  | 'preempted';

/** Which budget a retry after such an attempt spends (retry-policy.ts decides). */
export type RetryBudget = 'none' | 'retries' | 'infraRetries' | 'preemptionRetries';

/** What an attempt's end means. */
export interface AttemptEndInfo {
  /** The budget a retry after it spends (`none`: it is not retried). */
  readonly budget: RetryBudget;
  /** How a person reads it (records, `cairn status`). */
  readonly label: string;
}

/** Every attempt end, described once. */
export const ATTEMPT_ENDS: Readonly<Record<AttemptEnd, AttemptEndInfo>> = Object.freeze({
  succeeded: { budget: 'none', label: 'succeeded' },
  failed: { budget: 'retries', label: 'failed' },
  timeout: { budget: 'retries', label: 'timed out' },
  cancelled: { budget: 'none', label: 'cancelled' },
  'lease-lost': { budget: 'none', label: 'lease lost to another runner' },
  lost: { budget: 'infraRetries', label: 'lost by its executor' },
  preempted: { budget: 'preemptionRetries', label: 'preempted' },
});

/** What a stored status means to a reader of the store (`cairn status`, `clean`, the report). */
export interface StatusInfo {
  /** The step counts as built. */
  readonly built: boolean;
  /** The step ended badly and a rerun runs it again (unless `forceRunFailed: false`). */
  readonly failed: boolean;
  /** How a person reads it. */
  readonly label: string;
}

/** Every stored status, described once. */
export const STATUSES: Readonly<Record<StatusToken, StatusInfo>> = Object.freeze({
  SUCCESS: { built: true, failed: false, label: 'built' },
  FAILED: { built: false, failed: true, label: 'failed' },
  DEP_FAILED: { built: false, failed: true, label: 'dependency failed' },
  CANCELLED: { built: false, failed: false, label: 'cancelled' },
  RUNNING: { built: false, failed: false, label: 'running (Marin)' },
});
