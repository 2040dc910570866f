/**
 * Dry run: what a run would do, with no writes at all. It is the run's own discovery (the same
 * expansion, pruning, classification and rebuild rules, reading the store), stopped before
 * anything is validated or run, so `plan` and `run` cannot disagree. Steps the run would not look
 * at (upstream of a built step) are listed too, as not examined.
 */
import { describeDrift, expandSpecs, type StepSpec } from '@cairn/core';
import type { PathIndex } from './path-index.js';
import { classify } from './run/classify.js';
import type { StepInput } from './run/discover.js';
import { BUILT, FORCED, type Node } from './run/node.js';
import type { Run } from './run/run.js';

/** What a run would do with a step. */
export type PlanState =
  /** Would run: not built (or mutable, or its record is unusable, or a rebuild was asked for). */
  | 'run'
  /** Built: served from the store. */
  | 'cached'
  /** Upstream of a built step: a run does not look at it (its dependent is served). */
  | 'not-examined'
  /** Built with another fingerprint than now: served with a drift warning (an error with a pinned fingerprint). */
  | 'drifted'
  /** Recorded FAILED or DEP_FAILED: rerun (`forceRunFailed`), or reported as a previous failure. */
  | 'failed-before';

/** How a person reads each plan state. */
export const PLAN_LABELS: Readonly<Record<PlanState, string>> = Object.freeze({
  run: 'will run',
  cached: 'cached',
  'not-examined': 'cached (not examined)',
  drifted: 'drifted',
  'failed-before': 'failed before',
});

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

/** What the plan says of a node the run's discovery classified. */
function verdictOf(node: Node, forceRunFailed: boolean): { state: PlanState; reason: string } {
  const spec = node.spec;
  if ((node.flags & FORCED) !== 0) return { state: 'run', reason: 'a rebuild was asked for (of this step or one upstream of it)' };
  const c = classify(spec, node.path, node.prior);
  if ((node.flags & BUILT) !== 0) {
    const rec = node.prior?.record;
    if (spec.fingerprint !== undefined && rec?.fingerprint !== undefined && rec.fingerprint !== spec.fingerprint) {
      const lines = describeDrift(rec.fingerprintPayload ?? '', spec.fingerprintPayload ?? '');
      const pinned = spec.expectedFingerprint !== undefined ? ' The fingerprint is pinned: the run would fail (CAIRN_FINGERPRINT_MISMATCH).' : ' Served from the cache with a warning.';
      return { state: 'drifted', reason: `recorded fingerprint ${rec.fingerprint}, now ${spec.fingerprint}: ${lines.join('; ')}.${pinned}` };
    }
    return { state: 'cached', reason: c.reason };
  }
  if (c.verdict === 'failed-before') {
    return { state: 'failed-before', reason: forceRunFailed ? `${c.reason}; would run again` : `${c.reason}; would fail with CAIRN_PREVIOUS_FAILURE (forceRunFailed: false)` };
  }
  return { state: 'run', reason: c.reason };
}

/** @internal Builds a plan with `run` (made for a dry run), pulling `steps` one at a time. Reads the store; never writes. */
export async function makePlan(run: Run, steps: Iterable<StepInput> | AsyncIterable<StepInput>): Promise<Plan> {
  const prefix = run.prefix;
  const out: PlanStep[] = [];
  const counts: Partial<Record<PlanState, number>> = {};
  await run.explore(steps, (nodes: PathIndex<Node>) => {
    const discovered: StepSpec[] = [];
    for (const node of nodes.values()) discovered.push(node.spec);
    // Dependencies first, over everything reachable (also what the run does not examine).
    const seen = new Set<string>();
    for (const spec of expandSpecs(discovered, () => false)) {
      const path = spec.outputPath(prefix);
      if (seen.has(path)) continue;
      seen.add(path);
      const node = nodes.get(path);
      const v = node !== undefined ? verdictOf(node, run.config.forceRunFailed) : { state: 'not-examined' as const, reason: 'upstream of a built step: a run serves its dependent and does not look at it' };
      counts[v.state] = (counts[v.state] ?? 0) + 1;
      out.push({ name: spec.name, nameWithHash: spec.nameWithHash, path, state: v.state, reason: v.reason, deps: spec.deps.map((d) => d.outputPath(prefix)) });
    }
  });
  return { prefix, steps: out, counts };
}
