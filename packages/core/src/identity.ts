import { getBackend } from './backend.js';
import type { FingerprintResult } from './backend-types.js';
import { compareCodePoints } from './canonical.js';
import { CairnError } from './errors.js';
import { TableWriter } from './pack.js';
import type { StepSpec } from './spec.js';

let walkEpoch = 0;

/** A fresh epoch for {@link StepSpec} traversal marks (wraps long before 2^28). */
export function nextWalkEpoch(): number {
  walkEpoch = walkEpoch >= 0x0fffffff ? 1 : walkEpoch + 1;
  return walkEpoch;
}

/** The canonical identity text of one step whose dependencies are already hashed (docs/identity.md). */
export function identityText(spec: StepSpec): string {
  const deps = spec.deps.map((d) => `${d.name}-${d._peekHash() as string}`).sort(compareCodePoints);
  let out = '{"deps":[';
  for (let i = 0; i < deps.length; i++) out += (i ? ',' : '') + JSON.stringify(deps[i]);
  return `${out}],"hashAttrs":${spec.attrsCanonical},"name":${JSON.stringify(spec.name)}}`;
}

/**
 * Unhashed specs reachable from `roots`, dependencies first (iterative; stops at hashed specs).
 * Returns the nodes and whether any of them depends on an already-hashed spec.
 */
function collectUnhashed(roots: readonly StepSpec[]): { order: StepSpec[]; open: boolean } {
  const order: StepSpec[] = [];
  const epoch = nextWalkEpoch(); // marks: 1 = on stack, 2 = done
  let open = false;
  const stack: StepSpec[] = [];
  const next: number[] = [];
  for (const root of roots) {
    if (root._peekHash() !== undefined || root._visitState(epoch) !== 0) continue;
    stack.push(root);
    next.push(0);
    root._setVisit(epoch, 1);
    while (stack.length > 0) {
      const top = stack.length - 1;
      const node = stack[top] as StepSpec;
      const i = next[top] as number;
      if (i < node.deps.length) {
        next[top] = i + 1;
        const dep = node.deps[i] as StepSpec;
        if (dep._peekHash() !== undefined) {
          open = true;
          continue;
        }
        const s = dep._visitState(epoch);
        if (s === 2) continue;
        if (s === 1) {
          const from = stack.indexOf(dep);
          const cycle = [...stack.slice(from), dep].map((n) => n.name).join(' -> ');
          throw new CairnError('CAIRN_GRAPH_CYCLE', `Step "${dep.name}" depends on itself: ${cycle}. Break the cycle.`, { step: dep.name });
        }
        dep._setVisit(epoch, 1);
        stack.push(dep);
        next.push(0);
      } else {
        stack.pop();
        next.pop();
        node._setVisit(epoch, 2);
        order.push(node);
      }
    }
  }
  return { order, open };
}

/**
 * Computes and caches the identity of every spec reachable from `roots`. A closed,
 * never-hashed graph goes to the backend's `fingerprintAll` in one call (native when
 * available); otherwise steps are hashed one by one, dependencies first.
 */
export function computeIdentities(roots: readonly StepSpec[]): void {
  const { order, open } = collectUnhashed(roots);
  const n = order.length;
  if (n === 0) return;
  const backend = getBackend();
  if (open || n < 64) {
    for (const spec of order) spec._setHash(backend.xxh64Hex(identityText(spec)));
    return;
  }
  // Node indices ride on the specs' traversal slots: no million-entry map.
  const epoch = nextWalkEpoch();
  for (let i = 0; i < n; i++) (order[i] as StepSpec)._setSlot(epoch, i);
  const offsets = new Uint32Array(n + 1);
  let edges = 0;
  for (let i = 0; i < n; i++) {
    edges += (order[i] as StepSpec).deps.length;
    offsets[i + 1] = edges;
  }
  const deps = new Uint32Array(edges);
  let e = 0;
  for (let i = 0; i < n; i++) for (const d of (order[i] as StepSpec).deps) deps[e++] = d._slot(epoch);
  const names = new TableWriter();
  const attrs = new TableWriter();
  for (const spec of order) {
    names.add(spec.name);
    attrs.add(spec.attrsCanonical);
  }
  applyHashes(order, backend.fingerprintAll({ offsets, deps }, names.table(), attrs.table()));
}

/** Stores a `fingerprintAll` answer on `specs` (node `i` is `specs[i]`), or throws the cycle by name. */
export function applyHashes(specs: readonly StepSpec[], result: FingerprintResult): void {
  if (!result.ok) {
    const cycle = [...result.cycle].map((i) => (specs[i] as StepSpec).name);
    throw new CairnError('CAIRN_GRAPH_CYCLE', `Step graph has a cycle: ${[...cycle, cycle[0]].join(' -> ')}. Break the cycle.`, { step: cycle[0] });
  }
  const hex = Buffer.from(result.hex.buffer, result.hex.byteOffset, result.hex.byteLength);
  for (let i = 0; i < specs.length; i++) (specs[i] as StepSpec)._setHash(hex.toString('latin1', 16 * i, 16 * i + 16));
}

/** The hash of one spec, computing whatever upstream identities are missing. */
export function hashOf(spec: StepSpec): string {
  computeIdentities([spec]);
  return spec._peekHash() as string;
}
