/**
 * Typed progress events. Every state change of every step is reported once, in order.
 */

import type { StepState } from './states.js';

export type { FinalStepState, StepState } from './states.js';

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
  /** The attempt's log files (`running`): where its output appears while it runs (it moves with the output at the commit). */
  readonly logs?: { readonly stdout: string; readonly stderr: string };
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
