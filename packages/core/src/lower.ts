import { isArtifactStep, isStepSpec } from './brand.js';
import { canonicalize } from './canonical.js';
import { CairnError } from './errors.js';
import type { ArtifactStep, Layout } from './handle.js';
import { inputsMayChange } from './mutable-inputs.js';
import { computeIdentities } from './identity.js';
import { checkOutputPaths } from './output-paths.js';
import { growU32, TableWriter } from './pack.js';
import { IdentTable, VersionTable } from './lower-tables.js';
import { extraOf, hashCall } from './session-hash.js';
import { fingerprintPayload, writePayload } from './payload.js';
import { captureProvenance } from './provenance.js';
import { revealSecrets, SECRET_VALUES } from './secret.js';
import { checkSource, type LazyHooks, type LoweredGraph, specOf, StepSpec } from './spec.js';
import { getBackend } from './backend.js';
import type { LoweredTables } from './backend-types.js';
import type { Provenance } from './types.js';
import { checkLayout } from './step-checks.js';
import { resolveInputs, toTemplate } from './template.js';
import { isMutableVersion } from './validate.js';

let lowerEpoch = 0;

/**
 * @internal What lowering has done in this process: `calls` lowering passes, `nodes` handles
 * made into specs. Read by the tests that check a streamed pipeline is lowered in linear work.
 */
export const loweringWork = { calls: 0, nodes: 0 };
const EMPTY_U32 = new Uint32Array(0);
const EMPTY_U8 = new Uint8Array(0);

// A lowered `apply` spec derives its inputs template, payload and function from its handle
// on first use: lowering a million steps then builds none of them. Each lowered graph carries these.
const APPLY_HOOKS: LazyHooks = {
  payload: (_spec, source) => fingerprintPayload(source as ArtifactStep<unknown>),
  inputs(spec, source) {
    const handle = source as ArtifactStep<unknown>;
    // Frozen plain inputs cannot have changed: only inputs that keep a mutable object are checked.
    const fingerprint = inputsMayChange(handle) ? getBackend().xxh64Hex(fingerprintPayload(handle)) : spec.fingerprint;
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
    return (outputPath, ctx) => {
      const inputs = resolveInputs(spec, outputPath, ctx.depPaths);
      // Secrets are filled in at call time from what the executor handed the context (never stored in the spec).
      const secrets = (ctx as unknown as { [SECRET_VALUES]?: Readonly<Record<string, string>> })[SECRET_VALUES];
      return userFn(revealSecrets(inputs, secrets ?? {}, spec.name), ctx);
    };
  },
};

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
 * Lowering piece by piece (handles pulled one at a time) shares work across calls only
 * through a {@link LoweringSession}.
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
  const out = lowerPass(new Lowering(provenance, layout, false, false), roots) ?? (lowerPass(new Lowering(provenance, layout, true, false), roots) as StepSpec[]);
  return single ? (out[0] as StepSpec) : out;
}

/**
 * @internal Lowering in pieces: each {@link lower} call of one session lowers only the handles
 * no earlier call of the session lowered, and returns the same spec for a handle every time
 * (a runner pulling a pipeline one handle at a time lowers each step once, not once per
 * dependent pulled after it). Identities are those one `lower()` call of everything gives.
 * Provenance is captured once, by the first call. A call that throws leaves the session as
 * new: the next call starts over (its specs are new objects with the same identities).
 * Marks live on the handles: lowering a handle elsewhere meanwhile (another session, a
 * plain `lower()`) makes this session lower it again, merged with its earlier step.
 */
export class LoweringSession {
  readonly #layout: Layout;
  #state: Lowering | undefined;

  constructor(options?: LowerOptions) {
    this.#layout = checkLayout(undefined, options?.layout, 'LoweringSession: options.layout') ?? 'content';
  }

  /** `items` as specs, in order (specs pass through); lowers what this session has not. */
  lower(items: readonly unknown[]): StepSpec[] {
    const state = (this.#state ??= new Lowering(captureProvenance(), this.#layout, true, true));
    try {
      return lowerPass(state, items) as StepSpec[];
    } catch (err) {
      this.#state = undefined;
      throw err;
    }
  }
}

/** The growing tables of a lowering. */
interface GrowingTables {
  readonly versionOf: Uint32Array<ArrayBuffer>;
  readonly mutableAt: Uint8Array;
  readonly offsets: Uint32Array<ArrayBuffer>;
  readonly edges: Uint32Array<ArrayBuffer>;
  readonly fingerprints: Uint8Array;
}

/**
 * The last one-call lowering's tables, reused by the next: its specs keep trimmed copies.
 * Grown anew by doubling in every call, they allocated twice the graph's size in array
 * buffers, which starts V8's marking of the whole heap (bench row "lower() 1M layered").
 */
let spareTables: GrowingTables | undefined;

/**
 * What one lowering has numbered so far, in growing tables: every node of one `lower()` call,
 * or of every call of a {@link LoweringSession}. Node `i` is `sources[i]`; the specs are views
 * over these tables (`graph`), which are replaced by bigger copies as they grow.
 */
class Lowering {
  /** The handle marks of this lowering (memo and stack state live on the handles: no million-entry maps). */
  readonly epoch = ++lowerEpoch;
  readonly sources: ArtifactStep<unknown>[] = [];
  readonly graph: LoweredGraph;
  readonly versions = new VersionTable();
  /** Set when every new step is looked up by name@version as it is made (see {@link lowerPass}). */
  readonly made: IdentTable | undefined;
  /** Whether the tables outlive one call (kept at their capacity instead of trimmed). */
  readonly session: boolean;
  versionOf: Uint32Array<ArrayBuffer>;
  mutableAt: Uint8Array;
  offsets: Uint32Array<ArrayBuffer>;
  edges: Uint32Array<ArrayBuffer>;
  fingerprints: Uint8Array;
  hashes: Uint8Array = EMPTY_U8;
  /** Scratch of {@link hashNew}: node `i`'s local number + 1 during one call, else 0. */
  slot: Int32Array = new Int32Array(0);

  constructor(provenance: Provenance | undefined, layout: Layout, dedupe: boolean, session: boolean) {
    this.graph = { sources: this.sources, specs: [], offsets: EMPTY_U32, edges: EMPTY_U32, fingerprints: EMPTY_U8, hashes: EMPTY_U8, provenance, layout, hooks: APPLY_HOOKS };
    this.session = session;
    // A session's calls must find the steps of earlier calls by name@version: it always dedupes.
    this.made = dedupe || session ? new IdentTable(this.sources) : undefined;
    const tables = (!session && spareTables) || { versionOf: new Uint32Array(1024), mutableAt: new Uint8Array(1024), offsets: new Uint32Array(1024), edges: new Uint32Array(4096), fingerprints: new Uint8Array(16 * 1024) };
    if (!session) spareTables = undefined; // taken: a lowering started meanwhile (from a toJSON) makes its own
    ({ versionOf: this.versionOf, mutableAt: this.mutableAt, offsets: this.offsets, edges: this.edges, fingerprints: this.fingerprints } = tables);
  }

  /** Hands this one-call lowering's tables to the next call (its specs keep copies). */
  spare(): void {
    const { versionOf, mutableAt, offsets, edges, fingerprints } = this;
    spareTables = { versionOf, mutableAt, offsets, edges, fingerprints };
  }

  /** Makes room for node `n` (and the offset after it). */
  grow(n: number): void {
    if (n + 2 <= this.offsets.length) return;
    this.offsets = growU32(this.offsets, n + 2);
    this.versionOf = growU32(this.versionOf, n + 2);
    const m = new Uint8Array(this.offsets.length);
    m.set(this.mutableAt);
    this.mutableAt = m;
  }
}

/**
 * Scratch tables of a lowering pass, reused from call to call (the backend keeps nothing of
 * them): a session's call per pulled handle made five 64 KiB buffers each, most of its time
 * in the collector (bench row "apply handles of one graph: generator vs array").
 */
const PAYLOADS = new TableWriter();
const STACK: ArtifactStep<unknown>[] = [];
const NEXT: number[] = [];
const NAMES = new TableWriter();
const EXTRAS = new TableWriter();

/** `a` (holding `used` bytes) copied into one at least `min` long, doubling. */
function growU8(a: Uint8Array, used: number, min: number): Uint8Array {
  if (min <= a.length) return a;
  const b = new Uint8Array(Math.max(2 * a.length, min));
  b.set(a.subarray(0, used));
  return b;
}

/**
 * Lowers `roots` into `state`. A new lowering (`made` unset) returns `undefined` when the
 * backend finds any name@version twice; with `made`, every new step is looked up by
 * name@version as it is made: the same step again (another handle) is merged, a different
 * one is `CAIRN_DUPLICATE_STEP`.
 */
function lowerPass(state: Lowering, roots: readonly unknown[]): StepSpec[] | undefined {
  // New steps are numbered as they are made, dependencies first, and described by packed
  // tables: the backend derives every fingerprint and step hash from them in one call, and
  // the specs are views over them.
  const epoch = state.epoch;
  loweringWork.calls++;
  const { sources, graph, versions, made } = state;
  /** The first node of this call: nodes below it were lowered (and hashed) by earlier calls. */
  const first = sources.length;
  const backend = getBackend();
  // Payloads are hashed a chunk at a time while lowering goes on: the chunk stays small
  // (in cache) and only the 16-byte fingerprints are kept.
  const payloads = PAYLOADS;
  payloads.clear();
  let chunkStart = first;
  const flush = (): void => {
    const end = chunkStart + payloads.count;
    state.fingerprints = growU8(state.fingerprints, 16 * chunkStart, 16 * end);
    backend.xxh64HexMany(payloads.table(), state.fingerprints, 16 * chunkStart);
    chunkStart = end;
    payloads.clear();
  };
  let { offsets, edges, versionOf, mutableAt } = state;
  const passed: StepSpec[] = [];
  /** Nodes with a pin: checked for sharing one output path once the pass is done. */
  const pinned: number[] = [];
  const out: StepSpec[] = [];
  // The walk's stack is empty between handles: one pair serves every call.
  const stack = STACK;
  const next = NEXT;
  stack.length = next.length = 0;
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
        state.grow(n);
        ({ offsets, versionOf, mutableAt } = state);
      }
      const e0 = offsets[n] as number;
      if (e0 + hdeps.length > edges.length) edges = state.edges = growU32(edges, e0 + hdeps.length);
      for (let k = 0; k < hdeps.length; k++) edges[e0 + k] = (hdeps[k] as ArtifactStep<unknown>)._index(epoch);
      const e1 = e0 + hdeps.length;
      checkHandle(h, edges, e0, e1, mutableAt, sources, payloads);
      const prior = made === undefined ? -1 : made.find(h.name, h.version);
      if (prior >= 0) {
        payloads.pop();
        // The same handle again (marked meanwhile by another lowering), or the same step from another handle.
        if (sources[prior] !== h) checkSameStep(sources, offsets, edges, prior, h, e0, e1);
        h._mark(epoch, 2, prior);
        continue;
      }
      offsets[n + 1] = e1;
      loweringWork.nodes++;
      sources.push(h);
      h._mark(epoch, 2, n);
      made?.add(n);
      versionOf[n] = versions.id(h.version);
      mutableAt[n] = isMutableVersion(h.version) ? 1 : 0;
      if (h.pin !== undefined) pinned.push(n);
      graph.specs.push(undefined); // made on first use (specOf): upstream specs are reached through their dependents

      if (payloads.pos > 48 * 1024) flush();
    }
    out.push(specOf(graph, root._index(epoch)));
  }
  const n = sources.length;
  if (n > first) {
    if (made === undefined) {
      // Only a plain call's first pass (first === 0): its names go on to the backend below.
      const names = NAMES;
      names.clear();
      for (let i = 0; i < n; i++) names.add((sources[i] as ArtifactStep<unknown>).name);
      if (backend.duplicateSteps(names.table(), versionOf.subarray(0, n)).length > 0) return undefined;
      checkOutputPaths(sources, offsets, edges, pinned, graph.layout);
      flush();
      hashNew(state, first, names);
    } else {
      checkOutputPaths(sources, offsets, edges, pinned, graph.layout);
      // A session's later call hashes its payloads in its one backend call (hashCall), unless a chunk already went.
      if (first > 0 && chunkStart === first) hashNew(state, first, undefined, payloads);
      else {
        flush();
        hashNew(state, first, undefined);
      }
    }
  }
  if (passed.length > 0) computeIdentities(passed);
  return out;
}

/** `CAIRN_DUPLICATE_STEP` unless handle `h` (dependencies `edges[e0, e1)`) is the same step as node `prior`. */
function checkSameStep(sources: readonly ArtifactStep<unknown>[], offsets: Uint32Array, edges: Uint32Array, prior: number, h: ArtifactStep<unknown>, e0: number, e1: number): void {
  const p0 = offsets[prior] as number, p1 = offsets[prior + 1] as number;
  const theirs = fingerprintPayload(sources[prior] as ArtifactStep<unknown>);
  const mine = fingerprintPayload(h);
  let same = p1 - p0 === e1 - e0 && theirs === mine;
  for (let k = 0; same && k < e1 - e0; k++) same = edges[p0 + k] === edges[e0 + k];
  if (!same) {
    const backend = getBackend();
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
}

/** Appends {@link extraOf} `h` to `extras`. */
function addExtra(extras: TableWriter, h: ArtifactStep<unknown>): void {
  if (h.expectedFingerprint === undefined) extras.addEmpty();
  else extras.add(extraOf(h));
}

/**
 * Computes the step hashes of nodes `[first, n)` in one backend call and publishes the grown
 * tables to the specs. A plain call's nodes all go to the backend as they are; a session's
 * later call is {@link hashCall} (with `payloads`, the new nodes' payloads not hashed yet).
 */
function hashNew(state: Lowering, first: number, names: TableWriter | undefined, payloads?: TableWriter): void {
  const n = state.sources.length;
  if (first > 0) {
    state.hashes = growU8(state.hashes, 16 * first, 16 * n);
    if (payloads !== undefined) state.fingerprints = growU8(state.fingerprints, 16 * first, 16 * n);
    hashCall(state, first, payloads);
  } else {
    const { sources, offsets, edges, versionOf, fingerprints } = state;
    if (names === undefined) {
      names = NAMES;
      names.clear();
      for (let i = 0; i < n; i++) names.add((sources[i] as ArtifactStep<unknown>).name);
    }
    const extras = EXTRAS;
    extras.clear();
    for (let i = 0; i < n; i++) addExtra(extras, sources[i] as ArtifactStep<unknown>);
    const tables: LoweredTables = {
      graph: { offsets: offsets.subarray(0, n + 1), deps: edges.subarray(0, offsets[n]) },
      names: names.table(),
      versionOf: versionOf.subarray(0, n),
      versions: state.versions.writer.table(),
      fingerprints: fingerprints.subarray(0, 16 * n),
      extras: extras.table(),
    };
    const hashes = getBackend().loweredIdentities(tables);
    if (!state.session) {
      // One call: the tables are trimmed to what the specs read.
      const graph = state.graph;
      graph.offsets = offsets.slice(0, n + 1);
      graph.edges = edges.slice(0, offsets[n]);
      graph.fingerprints = fingerprints.slice(0, 16 * n);
      graph.hashes = hashes;
      state.spare();
      return;
    }
    state.hashes = hashes;
  }
  const graph = state.graph;
  graph.offsets = state.offsets;
  graph.edges = state.edges;
  graph.fingerprints = state.fingerprints;
  graph.hashes = state.hashes;
}
