/**
 * The caller's steps as specs: every handle among them lowered in **one** `lower()` call, or
 * in one call of the run's lowering session.
 *
 * `lower()` memoizes within a call only. Lowering a list item by item, or chunk by chunk, walked
 * the shared upstream of the items again in every call: for a 100k-step layered pipeline given
 * as 100k handles, 98 calls of 1,024 handles each lowered about 5 million steps (bench row "warm
 * rerun of apply steps", 13 s; 1.1 s with one call). A run lowers what it pulls through its
 * session (`LoweringSession`), which lowers only what earlier pulls did not.
 */
import { type ArtifactStep, CairnError, isArtifactStep, isStepSpec, type LowerOptions, lower, type StepSpec } from '@cairn/core';
import type { LoweringSession } from '@cairn/core/internal';

/** A step as the caller may pass it. */
export type StepInput = StepSpec | ArtifactStep<unknown>;

/** `CAIRN_BAD_DEPENDENCY` for an item that is neither a spec nor a handle; `what` names the call (`run()`, `load()`, `rebuild`). */
export function notAStep(what: string, item: unknown): CairnError {
  return new CairnError('CAIRN_BAD_DEPENDENCY', `${what}: got ${item === null ? 'null' : typeof item} where a step was expected; pass StepSpecs or handles returned by apply().`);
}

/**
 * `items` with every handle replaced by its spec, in order; `items` itself when it holds no
 * handle. Throws {@link notAStep} for anything else. With `session`, handles are lowered by it
 * (`options` is the session's own).
 */
export function lowerInputs(items: readonly unknown[], options: LowerOptions, what: string, session?: LoweringSession): readonly StepSpec[] {
  let handles = false;
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (isArtifactStep(item)) handles = true;
    else if (!isStepSpec(item)) throw notAStep(what, item);
  }
  if (!handles) return items as readonly StepSpec[];
  return session !== undefined ? session.lower(items) : lower(items as readonly StepInput[], options);
}
