/**
 * @internal How Cairn's own modules (identity, graph walks, the runner) reach a spec's private
 * scratch. A leaf module: identity.ts hashes specs through it without importing spec.ts, which
 * imports identity.ts for `StepSpec.hash`.
 */
import type { StepSpec } from './spec.js';
import type { SpecInternals } from './spec-types.js';

/**
 * Where each copy of StepSpec (ESM and CJS in one process, two installed versions) puts its
 * own {@link SpecInternals} on its prototype: private fields are per class copy, so a spec made
 * by one copy must be handled by that copy's functions.
 */
export const INTERNALS = Symbol.for('cairn.StepSpec.internals');

/** The internals of the copy of StepSpec that made `s`. */
const own = (s: StepSpec): SpecInternals => (s as unknown as Record<symbol, SpecInternals>)[INTERNALS] as SpecInternals;

/** @internal Dispatches to the internals of the copy that made each spec. */
export const specInternals: SpecInternals = {
  attrsCanonical: (s) => own(s).attrsCanonical(s),
  setHashes: (s, batch, i) => own(s).setHashes(s, batch, i),
  setHash: (s, hash) => own(s).setHash(s, hash),
  tag: (s, owner) => own(s).tag(s, owner),
  setTag: (s, owner, value) => own(s).setTag(s, owner, value),
  clearTag: (s, owner) => own(s).clearTag(s, owner),
  visitState: (s, epoch) => own(s).visitState(s, epoch),
  setVisit: (s, epoch, state) => own(s).setVisit(s, epoch, state),
  slot: (s, epoch) => own(s).slot(s, epoch),
  setSlot: (s, epoch, slot) => own(s).setSlot(s, epoch, slot),
  peekHash: (s) => own(s).peekHash(s),
  hasHash: (s) => own(s).hasHash(s),
  writeHash: (s, out, at) => own(s).writeHash(s, out, at),
};
