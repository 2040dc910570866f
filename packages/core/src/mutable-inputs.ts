/**
 * Which handles' inputs may still change after `apply()`. A leaf module: handle.ts marks them,
 * lowering's lazy hooks (lower.ts) read the mark.
 */
import type { ArtifactStep } from './handle.js';

/**
 * Handles whose inputs keep an object that can still change (a Date, Map, typed array, class
 * instance): only their inputs are fingerprinted again when a step runs, to catch a change made
 * after lowering. Frozen plain inputs cannot change (bench rows "apply handles of one graph" and
 * "apply pipeline reading/writing files": the check cost ~4 µs per step).
 */
const MUTABLE_INPUTS = new WeakSet<ArtifactStep<unknown>>();

/** @internal Whether `handle`'s inputs may have changed since `apply()` (see {@link MUTABLE_INPUTS}). */
export function inputsMayChange(handle: ArtifactStep<unknown>): boolean {
  return MUTABLE_INPUTS.has(handle);
}

/** @internal Marks `handle`'s inputs as able to change (apply() found an object it could not freeze). */
export function markInputsMutable(handle: ArtifactStep<unknown>): void {
  MUTABLE_INPUTS.add(handle);
}
