/**
 * The last finished run, kept (emptied) until the next one ends, so that V8 keeps the shapes of a
 * run's objects between runs in one process.
 *
 * V8 keeps the hidden classes of a class's instances (the maps its fields' transitions make) only
 * while an object of that shape lives, and optimized code holds them weakly. When a run ended,
 * every object of its kind (the run, each step's lifecycle, job, attempt result) died; the next
 * full collection dropped their shapes, and with them the optimized code of the whole lifecycle
 * (`--trace-deopt`: ~40 functions marked "weak objects" each run). Every later run in the process
 * started again in slow code. Keeping one object of each kind keeps the shapes: bench rows
 * "scheduler overhead, 100k layered" and "10k chain" (see tools/bench/README.md for the numbers).
 *
 * What is kept lets go of everything a step or a caller put in it first ({@link Run.letGo}): the
 * steps, specs, results, the lowering's tables and the secrets' values.
 */
import type { Run } from './run.js';

let kept: Run | undefined;

/** Empties `run` (it has ended: every step settled) and keeps it in place of the run kept before. */
export function keepShapes(run: Run): void {
  run.letGo();
  kept = run;
}

/** The run kept now (tests). */
export function keptRun(): Run | undefined {
  return kept;
}

/** Objects made at module load and held for the process's life, each the one kept instance of a short-lived class's shape. */
const held: object[] = [];

/** Holds `instance` for good, so that V8 keeps its class's instance shape between runs (see above). */
export function keepShape(instance: object): void {
  held.push(instance);
}
