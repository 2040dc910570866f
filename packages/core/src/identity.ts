import { getBackend } from './backend.js';
import { compareCodePoints } from './canonical.js';
import { CairnError } from './errors.js';
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
  const names = packStrings(order, (s) => s.name);
  const attrs = packStrings(order, (s) => s.attrsCanonical);
  const result = backend.fingerprintAll({ offsets, deps }, names, attrs);
  if (!result.ok) {
    const cycle = [...result.cycle].map((i) => (order[i] as StepSpec).name);
    throw new CairnError('CAIRN_GRAPH_CYCLE', `Step graph has a cycle: ${[...cycle, cycle[0]].join(' -> ')}. Break the cycle.`, { step: cycle[0] });
  }
  const hex = Buffer.from(result.hex.buffer, result.hex.byteOffset, result.hex.byteLength);
  for (let i = 0; i < n; i++) (order[i] as StepSpec)._setHash(hex.toString('latin1', 16 * i, 16 * i + 16));
}

/** Packs strings as UTF-8 into one CSR byte table, writing straight into one buffer. */
function packStrings(items: readonly StepSpec[], get: (s: StepSpec) => string): { offsets: Uint32Array; bytes: Uint8Array } {
  const offsets = new Uint32Array(items.length + 1);
  let total = 0;
  for (let i = 0; i < items.length; i++) {
    total += Buffer.byteLength(get(items[i] as StepSpec), 'utf8');
    offsets[i + 1] = total;
  }
  const bytes = Buffer.allocUnsafe(total);
  for (let i = 0; i < items.length; i++) bytes.write(get(items[i] as StepSpec), offsets[i] as number, 'utf8');
  return { offsets, bytes };
}

/** Packs byte strings into one CSR byte table. */
export function packTable(items: readonly Uint8Array[]): { offsets: Uint32Array; bytes: Uint8Array } {
  const offsets = new Uint32Array(items.length + 1);
  let total = 0;
  for (let i = 0; i < items.length; i++) {
    total += (items[i] as Uint8Array).length;
    offsets[i + 1] = total;
  }
  const bytes = new Uint8Array(total);
  for (let i = 0; i < items.length; i++) bytes.set(items[i] as Uint8Array, offsets[i] as number);
  return { offsets, bytes };
}

/** The hash of one spec, computing whatever upstream identities are missing. */
export function hashOf(spec: StepSpec): string {
  computeIdentities([spec]);
  return spec._peekHash() as string;
}
