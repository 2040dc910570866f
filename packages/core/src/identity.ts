import { getBackend } from './backend.js';
import type { CoreBackend } from './backend-types.js';
import { compareCodePoints } from './canonical.js';
import { CairnError } from './errors.js';
import { TableWriter } from './pack.js';
import { specInternals as S } from './spec-internals.js';
import type { StepSpec } from './spec.js';

let walkEpoch = 0;

/** A fresh epoch for {@link StepSpec} traversal marks (wraps long before 2^28). */
export function nextWalkEpoch(): number {
  walkEpoch = walkEpoch >= 0x0fffffff ? 1 : walkEpoch + 1;
  return walkEpoch;
}

/** The canonical identity text of one step whose dependencies are already hashed (docs/identity.md). */
export function identityText(spec: StepSpec): string {
  const deps = spec.deps.map((d) => `${d.name}-${S.peekHash(d) as string}`).sort(compareCodePoints);
  let out = '{"deps":[';
  for (let i = 0; i < deps.length; i++) out += (i ? ',' : '') + JSON.stringify(deps[i]);
  return `${out}],"hashAttrs":${S.attrsCanonical(spec)},"name":${JSON.stringify(spec.name)}}`;
}

/** Unhashed specs reachable from `roots`, dependencies first (iterative; stops at hashed specs). */
function collectUnhashed(roots: readonly StepSpec[]): StepSpec[] {
  const order: StepSpec[] = [];
  const epoch = nextWalkEpoch(); // marks: 1 = on stack, 2 = done
  const stack: StepSpec[] = [];
  const next: number[] = [];
  for (const root of roots) {
    if (S.hasHash(root) || S.visitState(root, epoch) !== 0) continue;
    stack.push(root);
    next.push(0);
    S.setVisit(root, epoch, 1);
    while (stack.length > 0) {
      const top = stack.length - 1;
      const node = stack[top] as StepSpec;
      const i = next[top] as number;
      if (i < node.deps.length) {
        next[top] = i + 1;
        const dep = node.deps[i] as StepSpec;
        const s = S.visitState(dep, epoch);
        if (s === 2 || S.hasHash(dep)) continue;
        if (s === 1) {
          const from = stack.indexOf(dep);
          const cycle = [...stack.slice(from), dep].map((n) => n.name).join(' -> ');
          throw new CairnError('CAIRN_GRAPH_CYCLE', `Step "${dep.name}" depends on itself: ${cycle}. Break the cycle.`, { step: dep.name });
        }
        S.setVisit(dep, epoch, 1);
        stack.push(dep);
        next.push(0);
      } else {
        stack.pop();
        next.pop();
        S.setVisit(node, epoch, 2);
        order.push(node);
      }
    }
  }
  return order;
}

/**
 * Specs hashed per backend call. A large graph goes in slices of its dependencies-first order,
 * each resting on the slices before it as known hashes: each slice's tables and specs stay in
 * the CPU caches, which makes the whole faster than one pass over every spec per table.
 */
const BATCH = 4096;

/**
 * Computes and caches the identity of every spec reachable from `roots`. Unhashed specs go to
 * the backend's `fingerprintAll` (native when available) a slice at a time, with the
 * already-hashed specs they depend on passed as known hashes; a handful are hashed one by one.
 */
export function computeIdentities(roots: readonly StepSpec[]): void {
  const order = collectUnhashed(roots);
  const n = order.length;
  if (n === 0) return;
  const backend = getBackend();
  if (n < 16) {
    for (const spec of order) S.setHash(spec, backend.xxh64Hex(identityText(spec)));
    return;
  }
  for (let start = 0; start < n; start += BATCH) hashBatch(backend, n <= BATCH ? order : order.slice(start, start + BATCH));
}

/** Scratch tables of {@link hashBatch}. */
const NAMES = new TableWriter();
const ATTRS = new TableWriter();

/** Hashes `list` (dependencies first; everything it depends on outside it is hashed) in one backend call. */
function hashBatch(backend: CoreBackend, list: readonly StepSpec[]): void {
  // Node indices ride on the specs' traversal slots: no map. The list comes first; the hashed
  // specs it rests on follow, with their hashes given and no dependencies of their own.
  const m = list.length;
  const epoch = nextWalkEpoch();
  for (let i = 0; i < m; i++) S.setSlot(list[i] as StepSpec, epoch, i);
  let edges = 0;
  for (let i = 0; i < m; i++) edges += (list[i] as StepSpec).deps.length;
  const deps = new Uint32Array(edges);
  const boundary: StepSpec[] = [];
  const listOffsets = new Uint32Array(m + 1);
  let e = 0;
  for (let i = 0; i < m; i++) {
    const ds = (list[i] as StepSpec).deps;
    for (let k = 0; k < ds.length; k++) {
      const d = ds[k] as StepSpec;
      let slot = S.slot(d, epoch);
      if (slot < 0) {
        slot = m + boundary.length;
        S.setSlot(d, epoch, slot);
        boundary.push(d);
      }
      deps[e++] = slot;
    }
    listOffsets[i + 1] = e;
  }
  const b = boundary.length;
  const total = m + b;
  let offsets = listOffsets;
  if (b > 0) {
    offsets = new Uint32Array(total + 1);
    offsets.set(listOffsets);
    offsets.fill(e, m + 1);
  }
  // The writers are reused from batch to batch (the backend reads the tables during the call and
  // keeps nothing): each new pair was two 64 KiB buffers grown by doubling, per batch.
  const names = NAMES;
  const attrs = ATTRS;
  names.clear();
  attrs.clear();
  for (let i = 0; i < m; i++) {
    const spec = list[i] as StepSpec;
    names.add(spec.name);
    attrs.add(S.attrsCanonical(spec));
  }
  const known = b > 0 ? Buffer.alloc(16 * total) : undefined;
  for (let k = 0; k < b; k++) {
    const spec = boundary[k] as StepSpec;
    names.add(spec.name);
    attrs.addEmpty();
    S.writeHash(spec, known as Buffer, 16 * (m + k));
  }
  const result = backend.fingerprintAll({ offsets, deps }, names.table(), attrs.table(), known);
  if (!result.ok) {
    const all = [...list, ...boundary];
    const cycle = [...result.cycle].map((i) => (all[i] as StepSpec).name);
    throw new CairnError('CAIRN_GRAPH_CYCLE', `Step graph has a cycle: ${[...cycle, cycle[0]].join(' -> ')}. Break the cycle.`, { step: cycle[0] });
  }
  // The specs keep the hex table; each hash string is made when first read.
  const batch = { hashes: result.hex };
  for (let i = 0; i < m; i++) S.setHashes(list[i] as StepSpec, batch, i);
}

/** The hash of one spec, computing whatever upstream identities are missing. */
export function hashOf(spec: StepSpec): string {
  computeIdentities([spec]);
  return S.peekHash(spec) as string;
}
