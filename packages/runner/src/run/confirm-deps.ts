/**
 * Before a step runs, every dependency's result must be known. A dependency served from the store
 * (cached) is confirmed now that it is consumed: its status and record are read, and if its output
 * vanished since discovery (its own inputs were never examined, so nothing would rebuild them),
 * the step fails with `CAIRN_PRUNED_OUTPUT_MISSING`, asking for a rerun.
 */
import { CairnError, kindMismatch, type StepSpec } from '@cairn/core';
import { isPromise, type Maybe } from '../maybe.js';
import type { StoredState } from '../store/store.js';
import { HAS_RESULT, type Node } from './node.js';
import type { Run } from './run.js';

/** Makes every dependency's result known; a promise only when the store reads asynchronously. */
export function confirmDeps(run: Run, node: Node): Maybe<void> {
  const deps = node.spec.deps;
  let unknown: Node[] | undefined;
  for (let i = 0; i < deps.length; i++) {
    const d = run.nodeOf(deps[i] as StepSpec) as Node;
    if ((d.flags & HAS_RESULT) === 0) (unknown ??= []).push(d);
  }
  if (unknown === undefined) return undefined;
  const states = run.store.readStates(pathsOf(unknown), true);
  return isPromise(states) ? confirmedLater(node, unknown, states) : confirmed(node, unknown, states);
}

// Helpers, not closures: a closure in confirmDeps would make every call allocate what it captures.
function pathsOf(deps: readonly Node[]): string[] {
  const paths = new Array<string>(deps.length);
  for (let i = 0; i < deps.length; i++) paths[i] = (deps[i] as Node).path;
  return paths;
}

async function confirmedLater(node: Node, deps: readonly Node[], states: Promise<StoredState[]>): Promise<void> {
  confirmed(node, deps, await states);
}

function confirmed(node: Node, deps: readonly Node[], states: readonly StoredState[]): void {
  for (let i = 0; i < deps.length; i++) {
    const d = deps[i] as Node;
    const st = states[i] as StoredState;
    if (st.status !== 'SUCCESS') {
      throw new CairnError(
        'CAIRN_PRUNED_OUTPUT_MISSING',
        `Step "${node.name}": the cached output of its dependency "${d.name}" at ${d.path} disappeared after its inputs were pruned (status=${st.status ?? 'none'}); rerun to rebuild it and its inputs.`,
        { step: node.name },
      );
    }
    const recorded = st.record?.artifact;
    const kind = d.spec.artifact;
    if (recorded !== undefined && kind !== undefined && recorded !== kind.name) throw kindMismatch(d.name, d.path, recorded, kind.name);
    d.flags |= HAS_RESULT;
    d.result = st.record?.result;
  }
}
