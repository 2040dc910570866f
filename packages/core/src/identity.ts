import { getBackend } from './backend.js';
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
 * Unhashed specs reachable from `roots`, dependencies first (iterative; stops at hashed
 * specs), and the hashed specs they depend on (`boundary`, each once).
 */
function collectUnhashed(roots: readonly StepSpec[]): { order: StepSpec[]; boundary: StepSpec[] } {
  const order: StepSpec[] = [];
  const boundary: StepSpec[] = [];
  const epoch = nextWalkEpoch(); // marks: 1 = on stack, 2 = done (or a boundary spec seen)
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
        const s = dep._visitState(epoch);
        if (s === 2) continue;
        if (dep._peekHash() !== undefined) {
          dep._setVisit(epoch, 2);
          boundary.push(dep);
          continue;
        }
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
  return { order, boundary };
}

/**
 * Computes and caches the identity of every spec reachable from `roots`. Unhashed specs go to
 * the backend's `fingerprintAll` in one call (native when available), with the already-hashed
 * specs they depend on passed as known hashes; a handful are hashed one by one.
 */
export function computeIdentities(roots: readonly StepSpec[]): void {
  const { order, boundary } = collectUnhashed(roots);
  const n = order.length;
  if (n === 0) return;
  const backend = getBackend();
  if (n < 16) {
    for (const spec of order) spec._setHash(backend.xxh64Hex(identityText(spec)));
    return;
  }
  // Node indices ride on the specs' traversal slots: no million-entry map. Boundary specs
  // come first, with their hashes given and no dependencies of their own.
  const b = boundary.length;
  const total = b + n;
  const epoch = nextWalkEpoch();
  for (let k = 0; k < b; k++) (boundary[k] as StepSpec)._setSlot(epoch, k);
  for (let i = 0; i < n; i++) (order[i] as StepSpec)._setSlot(epoch, b + i);
  const offsets = new Uint32Array(total + 1);
  let edges = 0;
  for (let i = 0; i < n; i++) {
    edges += (order[i] as StepSpec).deps.length;
    offsets[b + i + 1] = edges;
  }
  const deps = new Uint32Array(edges);
  let e = 0;
  for (let i = 0; i < n; i++) for (const d of (order[i] as StepSpec).deps) deps[e++] = d._slot(epoch);
  const names = new TableWriter();
  const attrs = new TableWriter();
  const known = b > 0 ? Buffer.alloc(16 * total) : undefined;
  for (let k = 0; k < b; k++) {
    const spec = boundary[k] as StepSpec;
    names.add(spec.name);
    attrs.addEmpty();
    (known as Buffer).write(spec._peekHash() as string, 16 * k, 'latin1');
  }
  for (const spec of order) {
    names.add(spec.name);
    attrs.add(spec.attrsCanonical);
  }
  const result = backend.fingerprintAll({ offsets, deps }, names.table(), attrs.table(), known);
  if (!result.ok) {
    const all = [...boundary, ...order];
    const cycle = [...result.cycle].map((i) => (all[i] as StepSpec).name);
    throw new CairnError('CAIRN_GRAPH_CYCLE', `Step graph has a cycle: ${[...cycle, cycle[0]].join(' -> ')}. Break the cycle.`, { step: cycle[0] });
  }
  // The specs keep the hex table; each hash string is made when first read.
  const batch = { hashes: result.hex.subarray(16 * b) };
  for (let i = 0; i < n; i++) (order[i] as StepSpec)._setHashes(batch, i);
}

/** The hash of one spec, computing whatever upstream identities are missing. */
export function hashOf(spec: StepSpec): string {
  computeIdentities([spec]);
  return spec._peekHash() as string;
}
