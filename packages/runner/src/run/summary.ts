/** What a finished run reports to its caller. */
import type { StepSpec } from '@cairn/core';
import type { PathIndex } from '../path-index.js';
import type { FinalStepState, StepState } from '../states.js';
import { HAS_RESULT, type Node } from './node.js';

/** How a step ended in a run (see {@link StepState}). */
export interface StepOutcome {
  /** Step name. */
  readonly name: string;
  /** Output path. */
  readonly path: string;
  /** Final state. */
  readonly state: StepState;
  /** The returned value as recorded (its JSON form), when known in this run. */
  readonly result: unknown;
  /** Whether `result` is known (false for steps not run or confirmed in this run: read it from the record). */
  readonly hasResult: boolean;
}

/** What a finished run reports. */
export interface RunSummary {
  /** The run's id. */
  readonly runId: string;
  /** Store prefix used. */
  readonly prefix: string;
  /** Steps by final state. */
  readonly counts: Readonly<Partial<Record<StepState, number>>>;
  /** The outcome of a step (by spec or output path). */
  outcome(step: StepSpec | string): StepOutcome | undefined;
}

/** The summary of a run whose nodes are `nodes`. */
export function summaryOf(runId: string, prefix: string, counts: Readonly<Partial<Record<StepState, number>>>, nodes: PathIndex<Node>): RunSummary {
  return {
    runId,
    prefix,
    counts,
    outcome(step) {
      const node = nodes.get(typeof step === 'string' ? step : step.outputPath(prefix));
      if (node === undefined) return undefined;
      return { name: node.name, path: node.path, state: node.state, result: node.result, hasResult: (node.flags & HAS_RESULT) !== 0 };
    },
  };
}

/** `counts` with the states no step ended in left out. */
export function countsOf(counts: Readonly<Record<FinalStepState, number>>): Partial<Record<StepState, number>> {
  const out: Partial<Record<StepState, number>> = {};
  for (const k in counts) if (counts[k as FinalStepState] > 0) out[k as FinalStepState] = counts[k as FinalStepState];
  return out;
}
