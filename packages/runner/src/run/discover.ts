/**
 * Discovery: pulling the caller's steps (eagerly, one item at a time, or an array in chunks),
 * lowering handles, hashing fresh specs, expanding each item's unseen dependencies with one
 * batched state read per frontier, classifying each step (built steps are not descended below),
 * validating executors and function references, and wiring the new steps to their dependencies.
 */
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { CairnError, checkVersionRule, computeIdentities, formatFnRef, resolveFnRef, type StepSpec } from '@cairn/core';
import { specInternals as S } from '@cairn/core/internal';
import { lowerInputs, type StepInput } from '../lower-inputs.js';
import { isPromise } from '../maybe.js';
import type { RecordWant, StoredState } from '../store/store.js';
import { classify } from './classify.js';
import { NO_EXTRA } from './dependents.js';
import { driftOf } from './drift.js';
import { driftVerdict } from './drift-policy.js';
import { ADOPTED, ADOPTED_DEP, BUILT, DRIFTED, extOf, FORCED, HAS_RESULT, newNode, type Node, SETTLED, UNCONFIRMED_DEP } from './node.js';
import { buildNodeRecord } from './record.js';
import type { Run } from './run.js';
import { type Selection, selects } from './selection.js';

export type { StepInput };

/** The state kept on a node classified as built (a run only asks whether it recorded a failure). */
const BUILT_STATE: StoredState = Object.freeze({ status: 'SUCCESS' });

/** Items of an array taken per expansion (one identity pass and one batched state read each). */
const CHUNK = 1024;

/** Pulls `steps` into `run` until they are exhausted or the run stops pulling. */
export async function pull(run: Run, steps: Iterable<StepInput> | AsyncIterable<StepInput>): Promise<void> {
  if (Array.isArray(steps)) {
    // The handles of an array are lowered in one call, before any chunk: per chunk, every
    // chunk would lower the upstream it shares with the others again (lower-inputs.ts).
    const list = lowerInputs(steps as readonly unknown[], run.config.lowerOptions, 'run()', run.lowering);
    // The whole graph is known before anything runs: a viewer draws it at once.
    run.config.journal?.plan(run.prefix, list);
    // At least one step per item: size the tables once instead of doubling them ~log2(n) times.
    run.nodes.reserve(run.nodes.size + list.length);
    run.store.reserve?.(list.length);
    // One chunk's state read is in flight while the next chunk is hashed and expanded, so the
    // store's reads and the CPU overlap (bench row warm-100k). Not when rebuilding: a step is
    // forced by its dependencies' marks, made chunk by chunk in order.
    const overlap = run.config.rebuild === undefined;
    /** The chunk whose read is still out while the next one is expanded. */
    let inFlight: Promise<void> | undefined;
    try {
      for (let i = 0; i < list.length && !run.stopPulling; i += CHUNK) {
        const room = run.admission.room();
        if (room !== undefined) await room;
        const added = add(run, list.slice(i, i + CHUNK));
        // Awaited below, or after the next chunk: marked handled now, so a failure (a missing
        // export on threads) while the loop yields is the run's error, not an unhandled rejection
        // that killed the process with a raw stack.
        added?.catch(() => undefined);
        const wait = overlap ? inFlight : added;
        inFlight = overlap ? added : undefined;
        if (wait !== undefined) await wait;
        await yieldToLoop();
      }
      if (inFlight !== undefined) await inFlight;
    } catch (err) {
      // The first failure is the run's; a later one of the chunk still in flight is not news.
      inFlight?.catch(() => undefined);
      throw err;
    }
    return;
  }
  const asyncIt = (steps as AsyncIterable<StepInput>)[Symbol.asyncIterator];
  const it: Iterator<StepInput> | AsyncIterator<StepInput> = typeof asyncIt === 'function' ? asyncIt.call(steps) : (steps as Iterable<StepInput>)[Symbol.iterator]();
  let pulled = 0;
  let finished = false;
  try {
    while (!run.stopPulling) {
      // Backpressure: do not pull more while enough runnable work is already queued.
      const room = run.admission.room();
      if (room !== undefined) {
        await room;
        continue;
      }
      let r = it.next();
      if (r instanceof Promise) r = await r;
      if ((r as IteratorResult<StepInput>).done) {
        finished = true;
        break;
      }
      const added = add(run, [(r as IteratorResult<StepInput>).value]);
      if (added !== undefined) await added;
      // Let running steps make progress between pulls of a synchronous iterable.
      if (++pulled % 64 === 0) await yieldToLoop();
    }
  } finally {
    if (!finished) await Promise.resolve(it.return?.()).catch(() => undefined);
  }
  // An iterable's steps are known once it is pulled: the plan comes late (readers take it so).
  const journal = run.config.journal;
  if (journal !== undefined && run.nodes.size > 0) journal.plan(run.prefix, [...run.nodes.values()].map((n) => n.spec));
}

/** The specs of `items` not seen by this run yet (lowering the handles among them in one call). */
function rootsOf(run: Run, items: readonly StepInput[]): readonly StepSpec[] {
  // One lowering and one identity pass per batch. The run's lowering session lowers only the
  // handles no earlier pull lowered, and gives an earlier pull's handle the same spec (tagged
  // below): an item pulled from an iterable costs its new steps, not its whole upstream (bench
  // row "apply handles of one graph: generator vs array"). Most chunks are all fresh specs:
  // no array is filtered.
  const specs = lowerInputs(items, run.config.lowerOptions, 'run()', run.lowering);
  // Lowering hashed whatever it returned (the specs among the items too); items that are all specs come back as they are.
  if (specs === items && specs.length > 0) computeIdentities(specs);
  for (let i = 0; i < specs.length; i++) {
    if (S.tag(specs[i] as StepSpec, run) !== undefined) return specs.filter((s) => S.tag(s, run) === undefined);
  }
  return specs;
}

/**
 * Adds `items` and everything upstream of them the run has not seen; a promise only when the
 * store reads asynchronously or function references must be imported.
 */
export function add(run: Run, items: readonly StepInput[]): Promise<void> | undefined {
  const roots = rootsOf(run, items);
  if (roots.length === 0) return undefined;
  return expand(run, [], roots);
}

/** `CAIRN_DUPLICATE_STEP`: two different steps resolve to one output path. */
function duplicate(a: StepSpec, b: StepSpec, path: string): CairnError {
  return new CairnError(
    'CAIRN_DUPLICATE_STEP',
    `Steps "${a.nameWithHash}" and "${b.nameWithHash}" both resolve to the output path ${path}: one would be served the other's output. Give them different pins (or names/versions).`,
    { step: b.name },
  );
}

/** One frontier after another: new nodes, one batched state read, classification, the next frontier. */
function expand(run: Run, fresh: Node[], frontier: readonly StepSpec[]): Promise<void> | undefined {
  const prefix = run.prefix;
  const nodes = run.nodes;
  while (frontier.length > 0) {
    const start = fresh.length;
    // Arrays sized up front and trimmed after: grown by push they would be copied ~8 times.
    const paths = new Array<string>(frontier.length);
    // Whole records where drift is checked (fixed paths); elsewhere their identity fields do.
    const wants = new Array<RecordWant>(frontier.length);
    let nPaths = 0;
    for (let i = 0; i < frontier.length; i++) {
      const spec = frontier[i] as StepSpec;
      if (S.tag(spec, run) !== undefined) continue;
      const path = spec.outputPath(prefix);
      const existing = nodes.get(path);
      if (existing !== undefined) {
        if (existing.spec !== spec) {
          // Another spec of the same step is fine (lowered twice); another step at one path is not.
          if (existing.spec.nameWithHash !== spec.nameWithHash) throw duplicate(existing.spec, spec, path);
          run.aliases.push(spec);
        }
        S.setTag(spec, run, existing);
        continue;
      }
      if (run.config.versions !== 'free' && spec.version !== undefined) checkVersionRule(spec.version, run.config.versions, spec.name);
      const node = newNode(spec, path, run.stamp, buildNodeRecord);
      nodes.add(node);
      S.setTag(spec, run, node);
      fresh.push(node);
      // Counted as it is made: a failure later in this expansion cancels it like any other.
      run.unsettled++;
      // Mutable steps are rebuilt whatever is stored: nothing to read.
      if (!spec.mutable) {
        wants[nPaths] = spec.fixedPath ? true : 'head';
        paths[nPaths++] = path;
      }
    }
    if (nPaths !== paths.length) paths.length = wants.length = nPaths;
    const states = nPaths > 0 ? run.store.readStates(paths, wants) : [];
    if (isPromise(states)) {
      return states.then((s) => expand(run, fresh, afterRead(run, fresh, start, s)));
    }
    frontier = afterRead(run, fresh, start, states);
  }
  return finishAdd(run, fresh);
}

/** Classifies the nodes from `start` with their states; returns the next frontier (dependencies of steps not built). */
function afterRead(run: Run, fresh: Node[], start: number, states: readonly StoredState[]): StepSpec[] {
  let k = 0;
  for (let i = start; i < fresh.length; i++) {
    const node = fresh[i] as Node;
    if (node.spec.mutable) continue;
    const st = states[k++] as StoredState;
    node.prior = st;
    const c = classify(node.spec, node.path, st);
    if (c.verdict === 'built') {
      node.flags |= BUILT;
      // Its record's fields are not read again but by a dry run's report: one shared state instead
      // of 10^5 records' fields kept to the run's end (the collector's work, bench row warm-100k).
      if (!run.config.dryRun) node.prior = BUILT_STATE;
      if (node.spec.fixedPath) {
        const drift = driftOf(node.spec, st.record);
        if (drift !== undefined) {
          node.flags |= DRIFTED;
          extOf(node).drift = drift;
        }
      }
    } else if (c.verdict === 'absent') {
      if (!run.config.dryRun) run.legacy.consider(node.spec, node.path);
    } else if (c.verdict === 'unusable') run.logger.warn(`Step ${node.name} (${node.path}): ${c.problem}; treating it as not built.`);
  }
  const next: StepSpec[] = [];
  // Rebuilding: a step to rebuild may lie upstream of a built one, so nothing is pruned. Below a
  // drifted step its dependencies are looked at too, so that their own drift is reported.
  const prune = run.config.rebuild === undefined;
  for (let i = start; i < fresh.length; i++) {
    const node = fresh[i] as Node;
    if (prune && (node.flags & (BUILT | DRIFTED)) === BUILT) continue;
    const deps = node.spec.deps;
    for (let j = 0; j < deps.length; j++) {
      const d = deps[j] as StepSpec;
      if (S.tag(d, run) === undefined) next.push(d);
    }
  }
  return next;
}

/** Validates and wires the new nodes, then pumps (a dry run stops after classifying them). */
function finishAdd(run: Run, fresh: Node[]): Promise<void> | undefined {
  if (run.config.rebuild !== undefined) markForced(run, fresh);
  if (run.config.dryRun) return undefined;
  if (run.cancelled) {
    for (const node of fresh) run.dependents.settle(node, 'cancelled', NO_EXTRA);
    return undefined;
  }
  let checks: Promise<unknown> | undefined;
  try {
    checks = validate(run, fresh);
  } catch (err) {
    abandon(run, fresh, err);
    throw err;
  }
  if (checks === undefined) {
    wireAll(run, fresh);
    return undefined;
  }
  return checks.then(
    () => wireAll(run, fresh),
    (err: unknown) => {
      abandon(run, fresh, err);
      throw err;
    },
  );
}

function abandon(run: Run, fresh: readonly Node[], err: unknown): void {
  for (const node of fresh) if ((node.flags & SETTLED) === 0) run.dependents.settle(node, 'cancelled', { error: err });
}

function wireAll(run: Run, fresh: readonly Node[]): void {
  // Discovery order, so independent steps start in the order given. Any order is correct: a
  // dependency settling later notifies the dependents registered on it.
  for (let i = 0; i < fresh.length; i++) wire(run, fresh[i] as Node);
  run.admission.pump();
}

/** Checks executors and function refs of steps that will run; a promise only when refs must be imported. */
function validate(run: Run, nodes: readonly Node[]): Promise<unknown> | undefined {
  const c = run.config;
  let refs: Promise<unknown>[] | undefined;
  for (const node of nodes) {
    if ((node.flags & BUILT) !== 0) continue;
    const spec = node.spec;
    const name = spec.executor ?? (c.remoteExecutor !== undefined && hasResources(spec) ? c.remoteExecutor : c.defaultExecutor);
    if (!run.registry.has(name)) {
      throw new CairnError('CAIRN_EXECUTOR', `Step "${spec.name}" asks for executor "${name}", which is not registered (registered: ${run.registry.names().join(', ')}). Register it with new StepRunner({ executors: [...] }) or fix the name.`, { step: spec.name });
    }
    node.executor = name;
    const ex = run.registry.get(name);
    if (ex.capabilities.secrets !== true) {
      const needs = c.secrets.namesOf(spec);
      if (needs.length > 0) {
        throw new CairnError(
          'CAIRN_SECRET_UNSAFE',
          `Step "${spec.name}" needs secret ${needs.join(', ')}, but executor "${name}" cannot hand a step its secrets without exposing them (see the executor's docs, "Secrets"). Run the step on an executor that can (inline, threads, process, ssh, slurm, sge), or turn on the executor's own secret delivery where its docs say that is safe (Ray: secrets: 'shared-file', when everyone who can submit jobs to the cluster may see the secret). Nothing was run.`,
          { step: spec.name },
        );
      }
    }
    if (!ex.capabilities.inProcess) {
      if (spec.ref === undefined) {
        throw new CairnError(
          'CAIRN_INLINE_FN_REMOTE',
          `Step "${spec.name}": its function is an inline closure, which cannot run on executor "${name}". Export it and wrap it with defineStep(import.meta.url, '<exportName>', fn), or run it on the "inline" executor.`,
          { step: spec.name },
        );
      }
      const key = formatFnRef(spec.ref);
      let check = run.refChecks.get(key);
      if (check === undefined) {
        check = resolveFnRef(spec.ref, spec.kind === 'path' ? spec.fn : undefined, spec.name);
        run.refChecks.set(key, check);
      }
      (refs ??= []).push(check);
    }
    const r = spec.resources;
    const max = ex.capabilities.maxConcurrency;
    if (r !== undefined || max !== undefined) {
      const demand = run.admission.demand(r, name, max);
      if (demand !== null) extOf(node).demand = demand;
    }
  }
  return refs !== undefined ? Promise.all(refs) : undefined;
}

function hasResources(spec: StepSpec): boolean {
  const r = spec.resources;
  return r !== undefined && Object.keys(r).length > 0;
}

/** A new node's place in the run: cached, dep-failed, waiting on its dependencies, or ready. */
function wire(run: Run, node: Node): void {
  if ((node.flags & SETTLED) !== 0) return;
  if ((node.flags & BUILT) !== 0) {
    if ((node.flags & DRIFTED) === 0) {
      run.dependents.settle(node, 'cached', NO_EXTRA);
      return;
    }
    const verdict = driftVerdict(node, run.config);
    if (verdict.error !== undefined) {
      run.failStep(node, verdict.error);
      return;
    }
    run.logger.warn(verdict.message);
    run.dependents.settle(node, 'cached', { message: verdict.message });
    return;
  }
  let failedDep: Node | undefined;
  const deps = node.spec.deps;
  for (let i = 0; i < deps.length; i++) {
    const d = run.nodeOf(deps[i] as StepSpec) as Node;
    if (d === node) continue;
    if ((d.flags & ADOPTED) !== 0) node.flags |= ADOPTED_DEP;
    if ((d.flags & SETTLED) !== 0) {
      if (d.state !== 'succeeded' && d.state !== 'cached' && d.state !== 'skipped') failedDep ??= d;
      else if ((d.flags & HAS_RESULT) === 0) node.flags |= UNCONFIRMED_DEP;
    } else run.dependents.link(d, node);
  }
  if (failedDep !== undefined) {
    run.dependents.settle(node, failedDep.state === 'cancelled' ? 'cancelled' : 'dep-failed', run.depFailedExtra(node, failedDep));
    if (failedDep.state !== 'cancelled') run.depFailed(node);
    return;
  }
  run.event(node, 'pending', NO_EXTRA);
  if (node.waiting === 0) run.admission.enqueue(node);
}

/**
 * Marks the steps of `fresh` a run rebuilds whatever is stored: those named by `rebuild`, and
 * every step downstream of one (its identity is unchanged, so its output would be served). Their
 * dependencies are classified before them (earlier batches, or a post-order walk of this one).
 */
function markForced(run: Run, fresh: readonly Node[]): void {
  const rebuild = run.config.rebuild as Selection;
  const named = (node: Node) => selects(rebuild, node);
  const batch = new Set(fresh);
  const done = new Set<Node>();
  const force = (node: Node) => {
    node.flags = (node.flags | FORCED) & ~(BUILT | DRIFTED);
  };
  for (const root of fresh) {
    if (done.has(root)) continue;
    const stack: [Node, number][] = [[root, 0]];
    while (stack.length > 0) {
      const top = stack[stack.length - 1] as [Node, number];
      const [node, i] = top;
      const deps = node.spec.deps;
      if (i < deps.length) {
        top[1] = i + 1;
        const d = run.nodeOf(deps[i] as StepSpec);
        if (d !== undefined && d !== node && !done.has(d) && batch.has(d)) stack.push([d, 0]);
        continue;
      }
      stack.pop();
      done.add(node);
      if (named(node)) force(node);
      else {
        for (let k = 0; k < deps.length; k++) {
          const d = run.nodeOf(deps[k] as StepSpec);
          if (d !== undefined && (d.flags & FORCED) !== 0) {
            force(node);
            break;
          }
        }
      }
    }
  }
}
