/**
 * Dry run: what a run would do, with no writes at all. It is the run's own discovery (the same
 * expansion, pruning, classification and rebuild rules, reading the store), stopped before
 * anything is validated or run, so `plan` and `run` cannot disagree. Steps the run would not look
 * at (upstream of a built step) are listed too, as not examined.
 */
import { expandSpecs, type StepSpec } from '@cairn/core';
import type { PathIndex } from './path-index.js';
import { classify, NOT_BUILT } from './run/classify.js';
import type { StepInput } from './run/discover.js';
import { type Drift, driftLines } from './run/drift.js';
import { changesSince, type EarlierBuild, EarlierBuilds } from './run/earlier-builds.js';
import { driftVerdict } from './run/drift-policy.js';
import { BUILT, DRIFTED, FORCED, type Node } from './run/node.js';
import type { Run } from './run/run.js';

/** What a run would do with a step. */
export type PlanState =
  /** Would run: not built (or mutable, or its record is unusable, or a rebuild was asked for). */
  | 'run'
  /** Built: served from the store. */
  | 'cached'
  /** Upstream of a built step: a run does not look at it (its dependent is served). */
  | 'not-examined'
  /** Built at a fixed path from another recipe than now: the run fails it (`CAIRN_DRIFT`) unless it is accepted (`acceptDrift`) or `onDrift: 'warn'`; the reason says which. */
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
function verdictOf(run: Run, node: Node): { state: PlanState; reason: string } {
  const forceRunFailed = run.config.forceRunFailed;
  const spec = node.spec;
  if ((node.flags & FORCED) !== 0) return { state: 'run', reason: 'a rebuild was asked for (of this step or one upstream of it)' };
  const c = classify(spec, node.path, node.prior);
  if ((node.flags & BUILT) !== 0) {
    if ((node.flags & DRIFTED) === 0) return { state: 'cached', reason: c.reason };
    const v = driftVerdict(node, run.config);
    const what = driftLines(node.ext?.drift as Drift).join('; ');
    const then = v.outcome === 'error' ? `the run would fail (${v.error?.code ?? 'CAIRN_DRIFT'}): bump the version, --rebuild it, or --accept-drift it` : v.outcome === 'accepted' ? 'served: drift accepted' : "served with a warning (onDrift: 'warn')";
    return { state: 'drifted', reason: `built from another recipe: ${what}; ${then}` };
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
  const earlier = new EarlierBuilds(run.store);
  await run.explore(steps, async (nodes: PathIndex<Node>) => {
    const discovered: StepSpec[] = [];
    for (const node of nodes.values()) discovered.push(node.spec);
    // Dependencies first, over everything reachable (also what the run does not examine).
    // Steps are found through their run's tags, not by hashing output paths (three string-keyed
    // look-ups per step were most of a dry run's own CPU: bench row "plan (dry run), nothing built").
    const seenNodes = new Set<Node>();
    /** Paths of the steps the run did not examine (they have no node). */
    const seenPaths = new Set<string>();
    const toExplain: number[] = [];
    /** The spec of each step of `out`. */
    const specs: StepSpec[] = [];
    const pathOf = (spec: StepSpec): string => run.nodeOf(spec)?.path ?? spec.outputPath(prefix);
    const depPaths = (deps: readonly StepSpec[]): string[] => {
      const paths = new Array<string>(deps.length);
      for (let i = 0; i < deps.length; i++) paths[i] = pathOf(deps[i] as StepSpec);
      return paths;
    };
    for (const spec of expandSpecs(discovered, () => false)) {
      const node = run.nodeOf(spec);
      let path: string;
      if (node !== undefined) {
        if (seenNodes.has(node)) continue;
        seenNodes.add(node);
        path = node.path;
      } else {
        path = spec.outputPath(prefix);
        if (seenPaths.has(path)) continue;
        seenPaths.add(path);
      }
      const v = node !== undefined ? verdictOf(run, node) : { state: 'not-examined' as const, reason: 'upstream of a built step: a run serves its dependent and does not look at it' };
      counts[v.state] = (counts[v.state] ?? 0) + 1;
      if (v.state === 'run' && v.reason === NOT_BUILT && toExplain.length < EXPLAINED && EarlierBuilds.applies(spec)) toExplain.push(out.length);
      out.push({ name: spec.name, nameWithHash: spec.nameWithHash, path, state: v.state, reason: v.reason, deps: depPaths(spec.deps) });
      specs.push(spec);
    }
    if (earlier.available) {
      await Promise.all(toExplain.map(async (i) => {
        const step = out[i] as PlanStep;
        const spec = (run.nodeOf(specs[i] as StepSpec) as Node).spec;
        out[i] = { ...step, reason: whyNotBuilt(spec, await earlier.of(spec, step.path)) };
      }));
    }
  });
  return { prefix, steps: out, counts };
}

/** Steps of one plan whose earlier builds are looked up to say what changed (a listing and a few record reads each). */
const EXPLAINED = 10_000;

/** Why a content-addressed step with nothing at its path runs, from its earlier builds. */
function whyNotBuilt(spec: StepSpec, builds: readonly EarlierBuild[]): string {
  const legacy = builds.find((b) => b.versioned && b.record.nameWithHash === spec.nameWithHash);
  if (legacy !== undefined) {
    return `not built at its content-addressed path; an output with this very identity is at ${legacy.path} (the 'versioned' layout, as Cairn wrote before 0.2), which this layout does not reuse: set layout: 'versioned' on the step or the runner to serve it (runner README, "Migrating a store")`;
  }
  const last = builds.find((b) => !b.versioned) ?? builds[0];
  if (last === undefined) return NOT_BUILT;
  return `changed since the last build: ${changesSince(spec, last.record).join('; ')} (last build: ${last.path})`;
}
