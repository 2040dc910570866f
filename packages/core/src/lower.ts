import { isStepSpec } from './brand.js';
import { canonicalize } from './canonical.js';
import { CairnError } from './errors.js';
import { type ArtifactStep, isArtifactStep, type Layout } from './handle.js';
import { computeIdentities } from './identity.js';
import { checkOutputPaths } from './output-paths.js';
import { growU32, TableWriter } from './pack.js';
import { fingerprintPayload, writePayload } from './payload.js';
import { captureProvenance } from './provenance.js';
import { checkSource, type LoweredGraph, setLazyHooks, specOf, StepSpec } from './spec.js';
import { getBackend } from './backend.js';
import type { Provenance } from './types.js';
import { checkLayout } from './step-checks.js';
import { resolveInputs, toTemplate } from './template.js';
import { isMutableVersion } from './validate.js';

let lowerEpoch = 0;
const EMPTY_U32 = new Uint32Array(0);
const EMPTY_U8 = new Uint8Array(0);

// A lowered `apply` spec derives its inputs template, payload and function from its handle
// on first use: lowering a million steps then builds none of them.
setLazyHooks({
  payload: (_spec, source) => fingerprintPayload(source as ArtifactStep<unknown>),
  inputs(spec, source) {
    const handle = source as ArtifactStep<unknown>;
    const fingerprint = getBackend().xxh64Hex(fingerprintPayload(handle));
    if (fingerprint !== spec.fingerprint) {
      throw new CairnError(
        'CAIRN_INVALID_SPEC',
        `Step "${spec.name}": its inputs were changed after lowering (config fingerprint now ${fingerprint}, lowered as ${String(spec.fingerprint)}); do not mutate inputs given to apply(), or lower again.`,
        { step: spec.name },
      );
    }
    const template = toTemplate(handle.inputs, handle.deps);
    // Runtime arguments reach the function with the inputs (apply() checked both are plain objects without shared keys).
    return handle.runtime === undefined ? template : { ...(template as Record<string, unknown>), ...handle.runtime };
  },
  fn(spec, source) {
    const userFn = (source as ArtifactStep<unknown>).fn as unknown as (inputs: unknown, ctx: unknown) => unknown;
    return (outputPath, ctx) => userFn(resolveInputs(spec, outputPath, ctx.depPaths), ctx);
  },
});

/**
 * Checks what lowering adds to `apply()`'s checks for handle `h`, whose dependencies are
 * nodes `deps[from, to)` (their mutability in `mutableAt`), and appends its fingerprint
 * payload to `payloads`.
 */
function checkHandle(h: ArtifactStep<unknown>, deps: Uint32Array, from: number, to: number, mutableAt: Uint8Array, sources: readonly ArtifactStep<unknown>[], payloads: TableWriter): void {
  const name = h.name;
  if (!isMutableVersion(h.version)) {
    for (let k = from; k < to; k++) {
      if (mutableAt[deps[k] as number] === 0) continue;
      const m = sources[deps[k] as number] as ArtifactStep<unknown>;
      throw new CairnError(
        'CAIRN_MUTABLE_DEPENDENCY',
        `Step "${name}@${h.version}" depends on mutable "${m.ident}": a fixed version cannot rest on a moving input. Give "${m.name}" a fixed version, or make "${name}" a dev version too.`,
        { step: name },
      );
    }
  }
  if (h.retries !== undefined || h.timeoutMs !== undefined || h.resources !== undefined) checkSource(h);
  writePayload(payloads, h);
  if (h.expectedFingerprint !== undefined) {
    const fingerprint = getBackend().xxh64Hex(payloads.entry(payloads.count - 1));
    if (h.expectedFingerprint !== fingerprint) {
      throw new CairnError(
        'CAIRN_FINGERPRINT_MISMATCH',
        `Step "${name}@${h.version}": its config fingerprint is ${fingerprint}, but ${h.expectedFingerprint} is pinned. Restore the config, or bump the version and update expectedFingerprint.`,
        { step: name },
      );
    }
  }
}

/**
 * The nodes of one lowering, findable by `name@version` (to catch two different steps
 * sharing one). An open-addressing table of node indices hashed on the name: a
 * million-entry `Map` of `name@version` strings costs several times more.
 */
class IdentTable {
  readonly #sources: readonly ArtifactStep<unknown>[];
  /** Pairs (index + 1, name hash); index 0 marks an empty slot. Hashes are compared before handles are touched. */
  #slots = new Int32Array(2048);
  #count = 0;

  constructor(sources: readonly ArtifactStep<unknown>[]) {
    this.#sources = sources;
  }

  /** The node named `name@version`, or -1. */
  find(name: string, version: string): number {
    const slots = this.#slots;
    const mask = (slots.length >> 1) - 1;
    const h = hashName(name);
    for (let p = h & mask; ; p = (p + 1) & mask) {
      const at = slots[2 * p] as number;
      if (at === 0) return -1;
      if (slots[2 * p + 1] !== h) continue;
      const s = this.#sources[at - 1] as ArtifactStep<unknown>;
      if (s.name === name && s.version === version) return at - 1;
    }
  }

  /** Adds node `index` (named as its source, not already present). */
  add(index: number): void {
    this.#count++;
    if (4 * this.#count > this.#slots.length) {
      const old = this.#slots;
      this.#slots = new Int32Array(2 * old.length);
      for (let p = 0; p < old.length; p += 2) if (old[p] !== 0) this.#place((old[p] as number) - 1, old[p + 1] as number);
    }
    this.#place(index, hashName((this.#sources[index] as ArtifactStep<unknown>).name));
  }

  #place(index: number, h: number): void {
    const slots = this.#slots;
    const mask = (slots.length >> 1) - 1;
    let p = h & mask;
    while ((slots[2 * p] as number) !== 0) p = (p + 1) & mask;
    slots[2 * p] = index + 1;
    slots[2 * p + 1] = h;
  }
}

/** The distinct versions of one lowering, numbered in first-seen order. */
class VersionTable {
  readonly writer = new TableWriter();
  readonly #ids = new Map<string, number>();
  #last = '';
  #lastId = -1;

  id(version: string): number {
    if (version === this.#last) return this.#lastId;
    let id = this.#ids.get(version);
    if (id === undefined) {
      id = this.#ids.size;
      this.#ids.set(version, id);
      this.writer.add(version);
    }
    this.#last = version;
    return (this.#lastId = id);
  }
}

/** FNV-1a over the UTF-16 code units. */
function hashName(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h | 0;
}

/** Options of {@link lower}. */
export interface LowerOptions {
  /** Where unpinned steps without a `layout` of their own live. @default 'content' */
  readonly layout?: Layout;
}

/**
 * Lowers lazy handles to the `StepSpec` graph. Pure: never calls a step function and does
 * no file or network I/O (the one side effect is capturing provenance once per call).
 * Memoized by handle identity (a shared sub-graph is lowered once) and iterative (no
 * recursion, so million-step chains are fine). Steps given as `StepSpec` pass through.
 */
export function lower(handle: ArtifactStep<unknown> | StepSpec, options?: LowerOptions): StepSpec;
export function lower(handles: readonly (ArtifactStep<unknown> | StepSpec)[], options?: LowerOptions): StepSpec[];
export function lower(input: ArtifactStep<unknown> | StepSpec | readonly (ArtifactStep<unknown> | StepSpec)[], options?: LowerOptions): StepSpec | StepSpec[] {
  const single = !Array.isArray(input);
  const roots = (single ? [input] : input) as readonly unknown[];
  const layout = checkLayout(undefined, options?.layout, 'lower(): options.layout') ?? 'content';
  const provenance = captureProvenance();
  // Most graphs have no two handles with one name@version; the first pass only confirms it
  // afterwards (one backend call), and the rare graph that has some is lowered again by the
  // pass that merges or refuses them as it goes.
  const out = lowerPass(roots, provenance, layout, false) ?? (lowerPass(roots, provenance, layout, true) as StepSpec[]);
  return single ? (out[0] as StepSpec) : out;
}

/**
 * One lowering pass over `roots`. With `dedupe`, every new step is looked up by
 * name@version as it is made: the same step again (another handle) is merged, a different
 * one is `CAIRN_DUPLICATE_STEP`. Without it, the pass returns `undefined` when the backend
 * finds any name@version twice.
 */
function lowerPass(roots: readonly unknown[], provenance: Provenance | undefined, layout: Layout, dedupe: boolean): StepSpec[] | undefined {
  // Memo and stack state live on the handles, stamped with this call's epoch: no
  // million-entry maps to build and collect. New steps are numbered as they are made,
  // dependencies first, and described by packed tables: the backend derives every
  // fingerprint and step hash from them in one call, and the specs are views over them.
  const epoch = ++lowerEpoch;
  const sources: ArtifactStep<unknown>[] = [];
  const specs: (StepSpec | undefined)[] = [];
  const graph: LoweredGraph = { sources, specs, offsets: EMPTY_U32, edges: EMPTY_U32, fingerprints: EMPTY_U8, hashes: EMPTY_U8, provenance, layout };
  const backend = getBackend();
  const names = new TableWriter();
  const extras = new TableWriter();
  // Payloads are hashed a chunk at a time while lowering goes on: the chunk stays small
  // (in cache) and only the 16-byte fingerprints are kept.
  const payloads = new TableWriter();
  let chunkStart = 0;
  let fingerprints = new Uint8Array(16 * 1024);
  const flush = (): void => {
    const end = chunkStart + payloads.count;
    if (16 * end > fingerprints.length) {
      const bigger = new Uint8Array(Math.max(2 * fingerprints.length, 16 * end));
      bigger.set(fingerprints.subarray(0, 16 * chunkStart));
      fingerprints = bigger;
    }
    backend.xxh64HexMany(payloads.table(), fingerprints, 16 * chunkStart);
    chunkStart = end;
    payloads.clear();
  };
  const versions = new VersionTable();
  let versionOf: Uint32Array<ArrayBuffer> = new Uint32Array(1024);
  let mutableAt = new Uint8Array(1024);
  let offsets: Uint32Array<ArrayBuffer> = new Uint32Array(1024);
  let edges = new Uint32Array(4096);
  const made = dedupe ? new IdentTable(sources) : undefined;
  const passed: StepSpec[] = [];
  /** Nodes with a pin: checked for sharing one output path once the pass is done. */
  const pinned: number[] = [];
  const out: StepSpec[] = [];
  const stack: ArtifactStep<unknown>[] = [];
  const next: number[] = [];
  for (let r = 0; r < roots.length; r++) {
    const root = roots[r];
    if (isStepSpec(root)) {
      out.push(root);
      passed.push(root);
      continue;
    }
    if (!isArtifactStep(root)) {
      throw new CairnError('CAIRN_BAD_DEPENDENCY', `lower(): item ${r} is not a step handle (got ${root === null ? 'null' : typeof root}); pass handles returned by apply().`);
    }
    if (root._state(epoch) !== 2) {
      stack.push(root);
      next.push(0);
      root._mark(epoch, 1);
    }
    while (stack.length > 0) {
      const top = stack.length - 1;
      const h = stack[top] as ArtifactStep<unknown>;
      const i = next[top] as number;
      const hdeps = h.deps;
      if (i < hdeps.length) {
        next[top] = i + 1;
        const d = hdeps[i] as ArtifactStep<unknown>;
        const st = d._state(epoch);
        if (st === 0) {
          d._mark(epoch, 1);
          stack.push(d);
          next.push(0);
        } else if (st === 1) {
          throw new CairnError('CAIRN_GRAPH_CYCLE', `Step "${d.name}" depends on itself through ${h.name}. Break the cycle.`, { step: d.name });
        }
        continue;
      }
      stack.pop();
      next.pop();
      // The new node's dependencies go to the edge list first (they are checked from there).
      const n = sources.length;
      if (n + 2 > offsets.length) {
        offsets = growU32(offsets, n + 2);
        versionOf = growU32(versionOf, n + 2);
        const m = new Uint8Array(offsets.length);
        m.set(mutableAt);
        mutableAt = m;
      }
      const e0 = offsets[n] as number;
      if (e0 + hdeps.length > edges.length) edges = growU32(edges, e0 + hdeps.length);
      for (let k = 0; k < hdeps.length; k++) edges[e0 + k] = (hdeps[k] as ArtifactStep<unknown>)._index(epoch);
      const e1 = e0 + hdeps.length;
      checkHandle(h, edges, e0, e1, mutableAt, sources, payloads);
      const prior = made === undefined ? -1 : made.find(h.name, h.version);
      if (prior >= 0) {
        // The same name@version again: fine when it is the same step (a rebuilt handle).
        payloads.pop();
        const p0 = offsets[prior] as number, p1 = offsets[prior + 1] as number;
        const theirs = fingerprintPayload(sources[prior] as ArtifactStep<unknown>);
        const mine = fingerprintPayload(h);
        let same = p1 - p0 === e1 - e0 && theirs === mine;
        for (let k = 0; same && k < e1 - e0; k++) same = edges[p0 + k] === edges[e0 + k];
        if (!same) {
          throw new CairnError(
            'CAIRN_DUPLICATE_STEP',
            `Two different steps are named "${h.name}" with version "${h.version}" (fingerprints ${backend.xxh64Hex(theirs)} and ${backend.xxh64Hex(mine)}); they would share one output. Rename one, or give it another version.`,
            { step: h.name },
          );
        }
        const priorRuntime = (sources[prior] as ArtifactStep<unknown>).runtime;
        if (priorRuntime !== h.runtime && canonicalize(priorRuntime ?? {}) !== canonicalize(h.runtime ?? {})) {
          throw new CairnError(
            'CAIRN_DUPLICATE_STEP',
            `Step "${h.name}@${h.version}" is given twice with different runtime arguments (${canonicalize(priorRuntime ?? {})} and ${canonicalize(h.runtime ?? {})}); it is one step and runs once. Build it from one handle, or give both the same runtime arguments.`,
            { step: h.name },
          );
        }
        const priorKind = (sources[prior] as ArtifactStep<unknown>).artifact;
        if (priorKind !== h.artifact && priorKind?.name !== h.artifact?.name) {
          throw new CairnError(
            'CAIRN_DUPLICATE_STEP',
            `Step "${h.name}@${h.version}" is given twice with different artifact kinds (${priorKind?.name ?? 'none'} and ${h.artifact?.name ?? 'none'}); it is one step with one output. Build it from one handle, or give both the same kind.`,
            { step: h.name },
          );
        }
        h._mark(epoch, 2, prior);
        continue;
      }
      offsets[n + 1] = e1;
      sources.push(h);
      h._mark(epoch, 2, n);
      made?.add(n);
      versionOf[n] = versions.id(h.version);
      mutableAt[n] = isMutableVersion(h.version) ? 1 : 0;
      if (h.pin !== undefined) pinned.push(n);
      names.add(h.name);
      if (h.expectedFingerprint === undefined) extras.addEmpty();
      else extras.add(`,"expectedFingerprint":${JSON.stringify(h.expectedFingerprint)}`);
      specs.push(undefined); // made on first use (specOf): upstream specs are reached through their dependents

      if (payloads.pos > 48 * 1024) flush();
    }
    out.push(specOf(graph, root._index(epoch)));
  }
  const n = sources.length;
  if (n > 0) {
    if (made === undefined && backend.duplicateSteps(names.table(), versionOf.subarray(0, n)).length > 0) return undefined;
    checkOutputPaths(sources, offsets, edges, pinned, layout);
    flush();
    graph.offsets = offsets.slice(0, n + 1);
    graph.edges = edges.slice(0, offsets[n]);
    graph.fingerprints = fingerprints.subarray(0, 16 * n);
    graph.hashes = backend.loweredIdentities({
      graph: { offsets: graph.offsets, deps: graph.edges },
      names: names.table(),
      versionOf: versionOf.subarray(0, n),
      versions: versions.writer.table(),
      fingerprints: graph.fingerprints,
      extras: extras.table(),
    });
  }
  if (passed.length > 0) computeIdentities(passed);
  return out;
}
