/**
 * Brands: how Cairn recognises its own objects. A registered symbol (`Symbol.for`) on the
 * class's prototype is the same in every copy of this package in a process (two versions, an
 * ESM and a CJS copy, a bundle) and survives bundling and minification, which rename classes
 * (tsup emits `class _StepSpec`): never compare a class name, and never rely on a bare
 * `instanceof` across package copies.
 */
import type { ArtifactStep } from './handle.js';
import type { StepSpec } from './spec.js';

/** On `StepSpec.prototype`. */
export const STEP_SPEC_BRAND = Symbol.for('cairn.StepSpec');
/** On `ArtifactStep.prototype` (the lazy handle of `apply`). */
export const ARTIFACT_STEP_BRAND = Symbol.for('cairn.handle');
/** On the `OUT` sentinel's prototype. */
export const OUT_BRAND = Symbol.for('cairn.OUT');
/** On `DepSlot.prototype` (a dependency's place in an inputs template). */
export const DEP_SLOT_BRAND = Symbol.for('cairn.DepSlot');

/** Puts `brand` on `proto` (not enumerable, not per instance: a per-instance brand would cost every object). */
export function brand(proto: object, symbol: symbol): void {
  Object.defineProperty(proto, symbol, { value: true });
}

/** True when `value` carries `symbol` (on itself or its prototype chain). */
export function hasBrand(value: unknown, symbol: symbol): boolean {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[symbol] === true;
}

/** True for a `StepSpec` (also one made by another copy of this package). */
export function isStepSpec(value: unknown): value is StepSpec {
  return hasBrand(value, STEP_SPEC_BRAND);
}

/** True for a lazy step handle (also from another copy of this package). */
export function isArtifactStep(value: unknown): value is ArtifactStep<unknown> {
  return hasBrand(value, ARTIFACT_STEP_BRAND);
}
