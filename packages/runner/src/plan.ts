/**
 * Dry run: what a run would do, with no writes at all (reads only).
 */
import { type ArtifactStep, computeIdentities, describeDrift, expandSpecs, isArtifactStep, lower, StepSpec } from '@cairn/core';
import { CairnError } from '@cairn/core';
import { classify } from './run/classify.js';
import type { Store, StoredState } from './store/store.js';

/** What a run would do with a step. */
export type PlanState =
  /** Would run: not built (or mutable, or its record is unusable). */
  | 'run'
  /** Built: served from the store. */
  | 'cached'
  /** Only reachable through built steps: not examined, not run. */
  | 'pruned'
  /** Built with another fingerprint than now: served with a drift warning (an error with a pinned fingerprint). */
  | 'drifted'
  /** Recorded FAILED or DEP_FAILED: rerun (`forceRunFailed`), or reported as a previous failure. */
  | 'failed-before';

/** One step of a plan. */
export interface PlanStep {
  /** Step name. */
  readonly name: string;
  /** Step identity. */
  readonly nameWithHash: string;
  /** Output path. */
  readonly path: string;
  /** What would happen. */
  readonly state: PlanState;
  /** Why. */
  readonly reason: string;
  /** Dependencies' output paths. */
  readonly deps: readonly string[];
}

/** The result of a dry run. */
export interface Plan {
  /** Store prefix. */
  readonly prefix: string;
  /** Every step reachable from the given ones, dependencies first. */
  readonly steps: readonly PlanStep[];
  /** Steps by state. */
  readonly counts: Readonly<Partial<Record<PlanState, number>>>;
}

/** What a plan says of a step with stored state `st` (the run's own classification, in a plan's words). */
function planOf(spec: StepSpec, path: string, st: StoredState | undefined, forceRunFailed: boolean): { state: PlanState; reason: string } {
  const c = classify(spec, path, st);
  switch (c.verdict) {
    case 'built': {
      const rec = st?.record;
      if (spec.fingerprint !== undefined && rec?.fingerprint !== undefined && rec.fingerprint !== spec.fingerprint) {
        const lines = describeDrift(rec.fingerprintPayload ?? '', spec.fingerprintPayload ?? '');
        const pinned = spec.expectedFingerprint !== undefined ? ' The fingerprint is pinned: the run would fail (CAIRN_FINGERPRINT_MISMATCH).' : ' Served from the cache with a warning.';
        return { state: 'drifted', reason: `recorded fingerprint ${rec.fingerprint}, now ${spec.fingerprint}: ${lines.join('; ')}.${pinned}` };
      }
      return { state: 'cached', reason: c.reason };
    }
    case 'failed-before':
      return { state: 'failed-before', reason: forceRunFailed ? `${c.reason}; would run again` : `${c.reason}; would fail with CAIRN_PREVIOUS_FAILURE (forceRunFailed: false)` };
    default:
      return { state: 'run', reason: c.reason };
  }
}

/** @internal Builds a plan, pulling `steps` one at a time. Reads the store; never writes. */
export async function makePlan(
  steps: Iterable<StepSpec | ArtifactStep<unknown>> | AsyncIterable<StepSpec | ArtifactStep<unknown>>,
  store: Store,
  prefix: string,
  forceRunFailed: boolean,
): Promise<Plan> {
  const out: PlanStep[] = [];
  const seen = new Set<string>();
  const seenSpec = new Set<StepSpec>();
  const counts: Partial<Record<PlanState, number>> = {};
  for await (const item of steps as AsyncIterable<StepSpec | ArtifactStep<unknown>>) {
    let root: StepSpec;
    if (item instanceof StepSpec) {
      root = item;
      computeIdentities([root]);
    } else if (isArtifactStep(item)) root = lower(item);
    else throw new CairnError('CAIRN_BAD_DEPENDENCY', `dry run: got ${item === null ? 'null' : typeof item} where a step was expected.`);
    // Post-order over specs not seen yet in this plan.
    if (seenSpec.has(root)) continue;
    const order = expandSpecs([root], () => false, seenSpec);
    const fresh = order.filter((s) => {
      const p = s.outputPath(prefix);
      if (seen.has(p)) return false;
      seen.add(p);
      return true;
    });
    const states = await store.readStates(fresh.map((s) => s.outputPath(prefix)), true);
    const verdict = new Map<StepSpec, { state: PlanState; reason: string }>();
    fresh.forEach((s, i) => verdict.set(s, planOf(s, s.outputPath(prefix), states[i], forceRunFailed)));
    // A step is needed when the root is it, or a needed, not-built dependent reaches it.
    const needed = new Set<StepSpec>([root]);
    for (let i = fresh.length - 1; i >= 0; i--) {
      const s = fresh[i] as StepSpec;
      const v = verdict.get(s);
      if (!needed.has(s) || v === undefined || v.state === 'cached' || v.state === 'drifted') continue;
      for (const d of s.deps) needed.add(d);
    }
    for (const s of fresh) {
      let v = verdict.get(s) as { state: PlanState; reason: string };
      if (!needed.has(s)) v = { state: 'pruned', reason: 'only needed by built steps; not examined by a run' };
      counts[v.state] = (counts[v.state] ?? 0) + 1;
      out.push({ name: s.name, nameWithHash: s.nameWithHash, path: s.outputPath(prefix), state: v.state, reason: v.reason, deps: s.deps.map((d) => d.outputPath(prefix)) });
    }
  }
  return { prefix, steps: out, counts };
}
