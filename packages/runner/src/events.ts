/**
 * Typed progress events. Every state change of every step is reported once, in order.
 */

/** A step's state during a run. */
export type StepState =
  /** Discovered; waiting for its dependencies or a free slot. */
  | 'pending'
  /** Another runner holds the step's lease; waiting without holding a slot. */
  | 'waiting-lease'
  /** An attempt is running on an executor. */
  | 'running'
  /** An attempt failed and another one follows (`retries`, timeouts, infrastructure faults). */
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

/** A step changed state. */
export interface StepEvent {
  /** Event kind. */
  readonly type: 'step';
  /** The run. */
  readonly runId: string;
  /** Step name. */
  readonly step: string;
  /** Output path: the step's key in the store. */
  readonly path: string;
  /** The new state. */
  readonly state: StepState;
  /** 1-based attempt (`running`, `retrying`, `failed`, `succeeded`). */
  readonly attempt?: number;
  /** The error (`failed`, `retrying`, `dep-failed`, `cancelled`). */
  readonly error?: unknown;
  /** A human-readable note (drift lines, the lease holder, the failed dependency). */
  readonly message?: string;
  /** Epoch milliseconds. */
  readonly time: number;
}

/** The run started or finished. */
export interface RunEvent {
  /** Event kind. */
  readonly type: 'run-started' | 'run-finished';
  /** The run. */
  readonly runId: string;
  /** Store prefix. */
  readonly prefix: string;
  /** Step counts by final state (`run-finished`). */
  readonly counts?: Readonly<Partial<Record<StepState, number>>>;
  /** Epoch milliseconds. */
  readonly time: number;
}

/** Any progress event. */
export type RunnerEvent = StepEvent | RunEvent;

/** Receives progress events. Must not throw (exceptions are logged and ignored). */
export type RunnerListener = (event: RunnerEvent) => void;
