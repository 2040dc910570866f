/**
 * The run journal's format (types only): one JSON object per line in
 * `{prefix}/.cairn/runs/{runId}.jsonl`. The first line is `run-started`, then usually the run's
 * {@link JournalPlan}, then every {@link RunnerEvent} in order, and `run-finished` last. Readers
 * (`cairn ui`, `cairn report`) skip lines they cannot parse and take a plan that comes late
 * (a run of an iterable, whose steps are known only once it is pulled).
 */
import type { RunnerEvent } from '../events.js';

/** An event as stored: errors flattened to `{ name, message, code }`. */
export type JournalEvent = RunnerEvent & { readonly error?: { name: string; message: string; code?: string } };

/** One step of a {@link JournalPlan}. */
export interface JournalPlanStep {
  /** Step name. */
  readonly name: string;
  /** Output path: the key of the step's events. */
  readonly path: string;
  /** Indices (in the plan's `steps`) of its dependencies. */
  readonly deps: readonly number[];
}

/**
 * The run's plan: every step the run may touch with its dependencies, so a viewer can draw the
 * whole DAG before steps run.
 */
export interface JournalPlan {
  /** Entry kind. */
  readonly type: 'plan';
  /** The run. */
  readonly runId: string;
  /** Epoch milliseconds. */
  readonly time: number;
  /** Host the runner runs on. */
  readonly host: string;
  /** User the runner runs as. */
  readonly user: string;
  /** Names of the run's targets. */
  readonly targets: readonly string[];
  /** Steps, dependencies first. */
  readonly steps: readonly JournalPlanStep[];
}

/** Any journal line. */
export type JournalEntry = JournalEvent | JournalPlan;
