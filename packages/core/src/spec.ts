import { brand, isStepSpec, STEP_SPEC_BRAND } from './brand.js';
import { canonicalize } from './canonical.js';
import { CairnError } from './errors.js';
import { getFnRef, getRemoteOptions } from './fnref.js';
import { hashOf } from './identity.js';
import { checkKnownKeys } from './known-keys.js';
import { checkLocation, flatStepPath, isAbsoluteLocation, joinPath, prefixBase } from './paths.js';
import { checkResources, checkRetries, checkSpecFields, checkTimeout, deepFreezeCopy, STEP_SPEC_KEYS } from './step-checks.js';
import type { ArtifactKind } from './artifact.js';
import type { Layout } from './handle.js';
import type { FnRef, PathStepFn, Provenance, Resources } from './types.js';
import { checkExecutorName, isMutableVersion, validateSegment } from './validate.js';

/** How a step's function is called: with its output path (`path`) or with resolved inputs (`apply`). */
export type StepKind = 'path' | 'apply';

/** Constructor options of {@link StepSpec}. */
export interface StepSpecInit {
  /** Step name: one path segment (no `/`, `..`, URL scheme or control characters). */
  name: string;
  /** The function to run; receives the output path (for `kind: 'path'`). */
  fn?: PathStepFn | undefined;
  /** Everything that defines the step's identity besides name and dependencies. Must be canonically encodable. @default {} */
  hashAttrs?: Readonly<Record<string, unknown>> | undefined;
  /** Upstream steps. Order does not matter for identity. @default [] */
  deps?: readonly StepSpec[] | undefined;
  /** Declared resources; never part of identity. */
  resources?: Resources | undefined;
  /** Executor name (`inline`, `threads`, `process`, `ssh`, `slurm`, …); default decided by the runner. */
  executor?: string | undefined;
  /** Output location: relative paths are joined to the store prefix, absolute ones used as-is. @default `nameWithHash` */
  overrideOutputPath?: string | undefined;
  /** The step writes its own artifact record (lazy steps do). @default false */
  writesRecord?: boolean | undefined;
  /** The canonical text that was fingerprinted, for drift diagnostics; never hashed. */
  fingerprintPayload?: string | undefined;
  /** Module + export of the function; defaults to the `defineStep` mark of `fn`. */
  ref?: FnRef | undefined;
  /** @internal Lowering fills these for `apply` steps. */
  kind?: StepKind | undefined;
  /** @internal The inputs template of an `apply` step (dependencies as slots, `OUT` as the sentinel). */
  inputs?: unknown;
  /** Artifact version (lazy steps); a version ending in `dev` is mutable. */
  version?: string | undefined;
  /** Config fingerprint (lazy steps). */
  fingerprint?: string | undefined;
  /** A pinned fingerprint: a drifted record is an error instead of a warning. */
  expectedFingerprint?: string | undefined;
  /** Retries after a failure (attempts live under the step, never in its identity). @default 0 */
  retries?: number | undefined;
  /** Per-attempt timeout in milliseconds. */
  timeoutMs?: number | undefined;
  /** Provenance of the lowering that produced this spec. */
  provenance?: Provenance | undefined;
  /** @internal Lowering: the handle this `apply` spec is lowered from; nothing else is read besides `lowering` and `index`. */
  source?: LazySource | undefined;
  /** @internal Lowering: the packed graph this spec is node `index` of. */
  lowering?: LoweredGraph | undefined;
  /** @internal Lowering: this spec's node index. */
  index?: number | undefined;
}

/**
 * @internal What lowering hands a lazy (`apply`) spec: the source handle, from which the
 * rarely read fields are derived on first use instead of being built for every step.
 */
export interface LazySource {
  readonly name: string;
  readonly fn: unknown;
  readonly version: string;
  readonly pin: string | undefined;
  /** Undefined: the lowering's ({@link LoweredGraph.layout}). */
  readonly layout: Layout | undefined;
  readonly runtime: Readonly<Record<string, unknown>> | undefined;
  readonly resources: Resources | undefined;
  readonly executor: string | undefined;
  readonly expectedFingerprint: string | undefined;
  readonly retries: number | undefined;
  readonly timeoutMs: number | undefined;
  readonly artifact: ArtifactKind<unknown> | undefined;
  readonly adoptedSource: string | undefined;
}

/** @internal How a lazy spec derives its fields (installed by lowering, which owns the handle logic). */
export interface LazyHooks {
  /** The inputs template (checks the inputs still match the lowered fingerprint). */
  inputs(spec: StepSpec, source: LazySource): unknown;
  /** The fingerprinted canonical text. */
  payload(spec: StepSpec, source: LazySource): string;
  /** The in-process function. */
  fn(spec: StepSpec, source: LazySource): PathStepFn;
}

let lazyHooks: LazyHooks | undefined;

/** @internal Installs {@link LazyHooks} (once, by the lowering module). */
export function setLazyHooks(hooks: LazyHooks): void {
  lazyHooks = hooks;
}

/** @internal Step hashes computed in one batch: 16 ASCII hex digits per spec, decoded when first read. */
export interface HashBatch {
  hashes: Uint8Array;
}

/**
 * @internal The packed result of one `lower()` call, shared by every spec it made: node `i`
 * is made from `sources[i]`; dependencies are CSR arrays; fingerprints and step hashes are
 * 16 ASCII hex digits per node. Spec objects, strings and arrays are derived on first read.
 */
export interface LoweredGraph extends HashBatch {
  readonly sources: readonly LazySource[];
  /** Node `i`'s spec once made ({@link specOf}); `undefined` before. */
  readonly specs: (StepSpec | undefined)[];
  /** Node `i` depends on `edges[offsets[i] .. offsets[i+1])`, in the handle's first-seen order. */
  offsets: Uint32Array;
  edges: Uint32Array;
  /** These four are filled once the whole lowering is numbered and hashed (before `lower()` returns). */
  fingerprints: Uint8Array;
  hashes: Uint8Array;
  readonly provenance: Provenance | undefined;
  /** Where unpinned steps without a layout of their own live. */
  readonly layout: Layout;
}

/**
 * @internal Checks the fields a lowered spec takes from its handle as they are (retries,
 * timeout, resources), so `lower()` refuses a bad one up front, not when the spec is first made.
 */
export function checkSource(source: LazySource): void {
  if (source.retries !== undefined) checkRetries(source.name, source.retries);
  if (source.timeoutMs !== undefined) checkTimeout(source.name, source.timeoutMs);
  if (source.resources !== undefined) checkResources(source.name, source.resources);
}

/** @internal Node `i`'s spec: made on first use, the same object every time after. */
export function specOf(g: LoweredGraph, i: number): StepSpec {
  return g.specs[i] ?? (g.specs[i] = new StepSpec({ name: '', source: g.sources[i], lowering: g, index: i }));
}

/** The fields of a spec built with `new StepSpec(init)`. */
interface PlainFields {
  readonly name: string;
  readonly resources: Resources | undefined;
  readonly executor: string | undefined;
  readonly writesRecord: boolean;
  readonly ref: FnRef | undefined;
  readonly kind: StepKind;
  readonly version: string | undefined;
  readonly fingerprint: string | undefined;
  readonly expectedFingerprint: string | undefined;
  readonly mutable: boolean;
  readonly retries: number;
  readonly timeoutMs: number | undefined;
  readonly provenance: Provenance | undefined;
  readonly fn: PathStepFn | undefined;
  readonly hashAttrs: Readonly<Record<string, unknown>>;
  readonly inputs: unknown;
  readonly payload: string | undefined;
  readonly override: string | undefined;
  /** Canonical hashAttrs; dropped once the hash is known (recomputed on demand). */
  attrsCanon: string | undefined;
}

/** What a lowered spec derives on first use (and its validated resources). */
interface LazyCache {
  resources?: Resources | undefined;
  fn?: PathStepFn;
  hashAttrs?: Readonly<Record<string, unknown>>;
  inputs?: unknown;
  payload?: string;
}

/**
 * @internal Operations on a spec's private scratch for Cairn's own modules (identity, graph
 * walks, the runner): not part of StepSpec's public type. Reached through `@cairn/core/internal`.
 */
export interface SpecInternals {
  /** Canonical encoding of `hashAttrs` (what identity hashes). */
  attrsCanonical(spec: StepSpec): string;
  /** Sets the hash to entry `i` of a batch (decoded when first read). */
  setHashes(spec: StepSpec, batch: HashBatch, i: number): void;
  /** Sets the hash computed one by one. */
  setHash(spec: StepSpec, hash: string): void;
  /**
   * The note `owner` left on the spec, or undefined (none, or another owner's since). One owner
   * at a time: an owner must be able to find its value another way when it is gone (a runner
   * looks the node up by output path), and clears its notes when done.
   */
  tag(spec: StepSpec, owner: object): unknown;
  /** Leaves `value` for `owner` (replacing any other owner's note). */
  setTag(spec: StepSpec, owner: object, value: unknown): void;
  /** Removes `owner`'s note, if it is still there. */
  clearTag(spec: StepSpec, owner: object): void;
  /** Traversal state in walk `epoch` (0 = untouched). */
  visitState(spec: StepSpec, epoch: number): number;
  /** Sets traversal state for walk `epoch`. */
  setVisit(spec: StepSpec, epoch: number, state: number): void;
  /** Node index for walk `epoch`, or -1. */
  slot(spec: StepSpec, epoch: number): number;
  /** Assigns node index `slot` in walk `epoch`. */
  setSlot(spec: StepSpec, epoch: number, slot: number): void;
  /** The hash if already computed. */
  peekHash(spec: StepSpec): string | undefined;
  /** Whether the hash is known (without making its string). */
  hasHash(spec: StepSpec): boolean;
  /** Writes the 16 hex digits of the (known) hash into `out` at `at`. */
  writeHash(spec: StepSpec, out: Uint8Array, at: number): void;
}

/**
 * Where each copy of this module (ESM and CJS in one process, two installed versions) puts its
 * own {@link SpecInternals} on its StepSpec's prototype: private fields are per class copy, so a
 * spec made by one copy must be handled by that copy's functions.
 */
const INTERNALS = Symbol.for('cairn.StepSpec.internals');

/** This copy's internals (set by StepSpec's static block, below). */
let local: SpecInternals;

/** The internals of the copy of StepSpec that made `s`. */
const own = (s: StepSpec): SpecInternals => (s as unknown as Record<symbol, SpecInternals>)[INTERNALS] ?? local;

/** @internal Dispatches to the internals of the copy that made each spec. */
export const specInternals: SpecInternals = {
  attrsCanonical: (s) => own(s).attrsCanonical(s),
  setHashes: (s, batch, i) => own(s).setHashes(s, batch, i),
  setHash: (s, hash) => own(s).setHash(s, hash),
  tag: (s, owner) => own(s).tag(s, owner),
  setTag: (s, owner, value) => own(s).setTag(s, owner, value),
  clearTag: (s, owner) => own(s).clearTag(s, owner),
  visitState: (s, epoch) => own(s).visitState(s, epoch),
  setVisit: (s, epoch, state) => own(s).setVisit(s, epoch, state),
  slot: (s, epoch) => own(s).slot(s, epoch),
  setSlot: (s, epoch, slot) => own(s).setSlot(s, epoch, slot),
  peekHash: (s) => own(s).peekHash(s),
  hasHash: (s) => own(s).hasHash(s),
  writeHash: (s, out, at) => own(s).writeHash(s, out, at),
};

/** Entry `i` of a table of 16-byte hex digests, as a string. */
const hexText = (bytes: Uint8Array, i: number): string => Buffer.prototype.latin1Slice.call(bytes, 16 * i, 16 * i + 16) as string;

/**
 * An immutable, lowered step: name, identity attributes, dependencies and how to run it.
 * Identity (`nameWithHash`) is Merkle over `{ name, hashAttrs, sorted deps' nameWithHash }`
 * (docs/identity.md); prefixes, paths, resources and executors never enter it.
 *
 * Two kinds share this class: specs built with `new StepSpec(init)` keep their fields in one
 * plain record; specs made by `lower()` are views over the lowering's packed graph and their
 * source handle (a million lowered steps are a million small objects, not a million records,
 * arrays and strings).
 */
export class StepSpec {
  /** @internal fields of a spec built with `new StepSpec(init)`. */
  #p: PlainFields | undefined;
  /** @internal lowered: the packed graph, this node's index and its handle; plain: a batch its hash is in (at `#i`). */
  #g: LoweredGraph | HashBatch | undefined;
  #i = 0;
  #src: LazySource | undefined;
  /** @internal upstream specs (lowered: built on first read). */
  #deps: readonly StepSpec[] | undefined;
  /** @internal lowered: derived fields cached on first use. */
  #lazy: LazyCache | undefined;
  /** @internal the Merkle hash, computed (or decoded from its batch) on first use. */
  #hash: string | undefined;
  /** @internal `nameWithHash`, made on first use. */
  #nameWithHash: string | undefined;
  /** One owner's note on this spec (a runner's node for it): see {@link SpecInternals.tag}. */
  #tagOwner: object | undefined;
  #tagValue: unknown;
  /** @internal traversal scratch (epoch * 4 + state), so large walks need no side maps. */
  #visit = 0;
  /** @internal traversal scratch: a node index valid while `#visit` is state 3 of the current walk. */
  #slot = 0;

  constructor(init: StepSpecInit) {
    if (typeof init !== 'object' || init === null) {
      throw new CairnError('CAIRN_INVALID_SPEC', 'new StepSpec(init): init must be an object with at least a name.');
    }
    const source = init.source;
    if (source !== undefined) {
      // Lowering: the handle was validated by apply(); lower() checked the rest.
      this.#g = init.lowering;
      this.#i = init.index ?? 0;
      this.#src = source;
      // checkSource() ran when it was lowered; the resources are copied (frozen) here.
      if (source.resources !== undefined) this.#lazy = { resources: checkResources(source.name, source.resources) };
      Object.freeze(this);
      return;
    }
    const name = validateSegment('name', init.name);
    checkKnownKeys(init, STEP_SPEC_KEYS, `new StepSpec() for step "${name}"`, { step: name });
    checkSpecFields(name, init as unknown as Record<string, unknown>);
    const deps = init.deps === undefined ? [] : init.deps;
    if (!Array.isArray(deps)) throw new CairnError('CAIRN_BAD_DEPENDENCY', `Step "${name}": deps must be an array of StepSpec.`, { step: name });
    for (let i = 0; i < deps.length; i++) {
      if (!isStepSpec(deps[i])) {
        throw new CairnError(
          'CAIRN_BAD_DEPENDENCY',
          `Step "${name}": deps[${i}] is not a StepSpec (got ${deps[i] === null ? 'null' : typeof deps[i]}); pass the upstream StepSpec itself, not its path or name.`,
          { step: name },
        );
      }
    }
    if (init.fn !== undefined && typeof init.fn !== 'function') {
      throw new CairnError('CAIRN_INVALID_SPEC', `Step "${name}": fn must be a function.`, { step: name });
    }
    const attrs = init.hashAttrs ?? {};
    const attrsCanon = canonicalize(attrs, { path: 'hashAttrs', step: name });
    const remoteOpts = getRemoteOptions(init.fn);
    const override = init.overrideOutputPath === undefined ? undefined : checkLocation('overrideOutputPath', init.overrideOutputPath, name);
    if (init.executor !== undefined) checkExecutorName(init.executor, `Step "${name}": executor`, 'CAIRN_INVALID_SPEC', name);
    const executor = init.executor ?? remoteOpts?.executor;
    const version = init.version === undefined ? undefined : validateSegment('version', init.version, name);
    this.#deps = Object.freeze([...deps]);
    this.#p = {
      name,
      resources: checkResources(name, init.resources === undefined ? remoteOpts?.resources : init.resources),
      executor,
      writesRecord: init.writesRecord ?? false,
      ref: init.ref ?? getFnRef(init.fn),
      kind: init.kind ?? 'path',
      version,
      fingerprint: init.fingerprint,
      expectedFingerprint: init.expectedFingerprint,
      mutable: version !== undefined && isMutableVersion(version),
      retries: checkRetries(name, init.retries),
      timeoutMs: checkTimeout(name, init.timeoutMs),
      provenance: init.provenance,
      fn: init.fn,
      hashAttrs: deepFreezeCopy(attrs),
      inputs: init.inputs,
      payload: init.fingerprintPayload,
      override,
      attrsCanon,
    };
    Object.freeze(this);
  }

  /** Step name. */
  get name(): string {
    const p = this.#p;
    return p !== undefined ? p.name : (this.#src as LazySource).name;
  }

  /** Upstream specs (frozen). */
  get deps(): readonly StepSpec[] {
    let deps = this.#deps;
    if (deps === undefined) {
      const g = this.#g as LoweredGraph;
      const a = g.offsets[this.#i] as number, b = g.offsets[this.#i + 1] as number;
      const out = new Array<StepSpec>(b - a);
      for (let k = a; k < b; k++) out[k - a] = specOf(g, g.edges[k] as number);
      deps = this.#deps = Object.freeze(out);
    }
    return deps;
  }

  /** Declared resources. */
  get resources(): Resources | undefined {
    const p = this.#p;
    return p !== undefined ? p.resources : this.#lazy?.resources;
  }

  /** Requested executor. */
  get executor(): string | undefined {
    const p = this.#p;
    return p !== undefined ? p.executor : (this.#src as LazySource).executor;
  }

  /** Whether the step writes its own artifact record. */
  get writesRecord(): boolean {
    return this.#p?.writesRecord ?? false;
  }

  /** Module + export, when the function can be re-imported elsewhere. */
  get ref(): FnRef | undefined {
    const p = this.#p;
    return p !== undefined ? p.ref : getFnRef((this.#src as LazySource).fn);
  }

  /** How the function is called. */
  get kind(): StepKind {
    return this.#p?.kind ?? 'apply';
  }

  /** Artifact version (lazy steps). */
  get version(): string | undefined {
    const p = this.#p;
    return p !== undefined ? p.version : (this.#src as LazySource).version;
  }

  /** Config fingerprint (lazy steps). */
  get fingerprint(): string | undefined {
    const p = this.#p;
    return p !== undefined ? p.fingerprint : hexText((this.#g as LoweredGraph).fingerprints, this.#i);
  }

  /** Pinned expected fingerprint. */
  get expectedFingerprint(): string | undefined {
    const p = this.#p;
    return p !== undefined ? p.expectedFingerprint : (this.#src as LazySource).expectedFingerprint;
  }

  /** True when the version ends in `dev`: always rebuilt. */
  get mutable(): boolean {
    const p = this.#p;
    return p !== undefined ? p.mutable : isMutableVersion((this.#src as LazySource).version);
  }

  /** Retries after failure. */
  get retries(): number {
    const p = this.#p;
    return p !== undefined ? p.retries : ((this.#src as LazySource).retries ?? 0);
  }

  /** Per-attempt timeout (ms). */
  get timeoutMs(): number | undefined {
    const p = this.#p;
    return p !== undefined ? p.timeoutMs : (this.#src as LazySource).timeoutMs;
  }

  /** Provenance of the lowering. */
  get provenance(): Provenance | undefined {
    const p = this.#p;
    return p !== undefined ? p.provenance : (this.#g as LoweredGraph).provenance;
  }

  #cache(): LazyCache {
    return (this.#lazy ??= {});
  }

  /** In-process function; absent on specs decoded from bytes (they run through `ref`). */
  get fn(): PathStepFn | undefined {
    const p = this.#p;
    if (p !== undefined) return p.fn;
    const c = this.#cache();
    return (c.fn ??= (lazyHooks as LazyHooks).fn(this, this.#src as LazySource));
  }

  /** Identity attributes (deep-frozen). */
  get hashAttrs(): Readonly<Record<string, unknown>> {
    const p = this.#p;
    if (p !== undefined) return p.hashAttrs;
    const c = this.#cache();
    if (c.hashAttrs === undefined) {
      // Lowered `apply` spec: rebuilt from its own fields, in the order lowering always used.
      const deps = this.deps;
      const idents = new Array<string>(deps.length);
      for (let i = 0; i < deps.length; i++) idents[i] = (deps[i] as StepSpec).ident;
      const a: Record<string, unknown> = { version: this.version, fingerprint: this.fingerprint, deps: Object.freeze(idents) };
      if (this.expectedFingerprint !== undefined) a.expectedFingerprint = this.expectedFingerprint;
      c.hashAttrs = Object.freeze(a);
    }
    return c.hashAttrs;
  }

  /**
   * The output location relative to the prefix (or absolute). A lowered `apply` step always has
   * one: its pin, or its layout's default, `{name}/{version}-{hash}` or `{name}/{version}`.
   */
  get overrideOutputPath(): string | undefined {
    const p = this.#p;
    if (p !== undefined) return p.override;
    const src = this.#src as LazySource;
    if (src.pin !== undefined) return src.pin;
    if ((src.layout ?? (this.#g as LoweredGraph).layout) === 'versioned') return `${src.name}/${src.version}`;
    return `${src.name}/${src.version}-${this.hash}`;
  }

  /**
   * True when the location stays the same across config changes (a pin, the `'versioned'` layout,
   * an `overrideOutputPath`): a stored output there may be of an older config, so the runner
   * checks its record for drift. False when the identity is in the path.
   */
  get fixedPath(): boolean {
    const p = this.#p;
    if (p !== undefined) return p.override !== undefined;
    const src = this.#src as LazySource;
    return src.pin !== undefined || (src.layout ?? (this.#g as LoweredGraph).layout) === 'versioned';
  }

  /** The artifact kind of an `apply` step (in this process only: kinds are code and never travel with a spec). */
  get artifact(): ArtifactKind<unknown> | undefined {
    return this.#p !== undefined ? undefined : (this.#src as LazySource).artifact;
  }

  /** For an adopted artifact (`adopt()`): the existing data's location, which dependents receive as its path. Its status and record live at `outputPath(prefix)`. */
  get adoptedSource(): string | undefined {
    return this.#p !== undefined ? undefined : (this.#src as LazySource).adoptedSource;
  }

  /** Runtime arguments of an `apply` step: passed to the function with its inputs, recorded, never hashed. */
  get runtime(): Readonly<Record<string, unknown>> | undefined {
    return this.#p !== undefined ? undefined : (this.#src as LazySource).runtime;
  }

  /** The fingerprinted canonical text (diagnostics only). */
  get fingerprintPayload(): string | undefined {
    const p = this.#p;
    if (p !== undefined) return p.payload;
    const c = this.#cache();
    return (c.payload ??= (lazyHooks as LazyHooks).payload(this, this.#src as LazySource));
  }

  /** Inputs template of an `apply` step. */
  get inputs(): unknown {
    const p = this.#p;
    if (p !== undefined) return p.inputs;
    const c = this.#cache();
    if (!('inputs' in c)) c.inputs = (lazyHooks as LazyHooks).inputs(this, this.#src as LazySource);
    return c.inputs;
  }

  /**
   * What other Cairn modules may do to a spec without it being part of its public type: the
   * identity pass's batched hashes and traversal marks, and one owner's note (a runner's node).
   * Built once, here, where the private fields are in reach, and put on the prototype for {@link specInternals}.
   */
  static {
    local = {
      attrsCanonical: (s) => s.#p?.attrsCanon ?? canonicalize(s.hashAttrs, { path: 'hashAttrs', step: s.name }),
      setHashes(s, batch, i) {
        s.#g = batch;
        s.#i = i;
        // Identity is fixed now; the canonical text is only needed again for diagnostics.
        if (s.#p !== undefined) s.#p.attrsCanon = undefined;
      },
      setHash(s, hash) {
        s.#hash = hash;
        if (s.#p !== undefined) s.#p.attrsCanon = undefined;
      },
      tag: (s, owner) => (s.#tagOwner === owner ? s.#tagValue : undefined),
      setTag(s, owner, value) {
        s.#tagOwner = owner;
        s.#tagValue = value;
      },
      clearTag(s, owner) {
        if (s.#tagOwner === owner) s.#tagOwner = s.#tagValue = undefined;
      },
      visitState: (s, epoch) => (s.#visit >>> 2 === epoch ? s.#visit & 3 : 0),
      setVisit(s, epoch, state) {
        s.#visit = epoch * 4 + state;
      },
      slot: (s, epoch) => (s.#visit === epoch * 4 + 3 ? s.#slot : -1),
      setSlot(s, epoch, slot) {
        s.#visit = epoch * 4 + 3;
        s.#slot = slot;
      },
      peekHash(s) {
        if (s.#hash !== undefined) return s.#hash;
        const g = s.#g;
        // A lowered spec's hash sits in its graph once lower() has hashed the lowering; a
        // batch-hashed plain spec's in its batch.
        if (g === undefined || g.hashes.length === 0) return undefined;
        return (s.#hash = hexText(g.hashes, s.#i));
      },
      hasHash(s) {
        if (s.#hash !== undefined) return true;
        const g = s.#g;
        return g !== undefined && g.hashes.length > 0;
      },
      writeHash(s, out, at) {
        // From the batch's bytes when no string was made: walks over large graphs need the
        // digits, not a string per spec.
        const h = s.#hash;
        if (h !== undefined) {
          for (let k = 0; k < 16; k++) out[at + k] = h.charCodeAt(k);
          return;
        }
        const bytes = (s.#g as LoweredGraph | HashBatch).hashes;
        const from = 16 * s.#i;
        for (let k = 0; k < 16; k++) out[at + k] = bytes[from + k] as number;
      },
    };
    Object.defineProperty(StepSpec.prototype, INTERNALS, { value: local });
  }

  /** 16 lowercase hex digits: XXH64 of the canonical identity bytes. */
  get hash(): string {
    return this.#hash ?? local.peekHash(this) ?? hashOf(this);
  }

  /** `${name}-${hash}`: the step's identity. */
  get nameWithHash(): string {
    return (this.#nameWithHash ??= `${this.name}-${this.hash}`);
  }

  /** The location of this step's output under `prefix` (exactly one `/` between parts). */
  outputPath(prefix: string): string {
    const o = this.overrideOutputPath;
    if (o !== undefined) return isAbsoluteLocation(o) ? o : joinPath(prefix, o);
    // The name cannot start with `/` (validateSegment). The hash is read from its batch without
    // keeping a string: a run needs every step's path, and few of their hashes.
    const base = prefixBase(prefix, true);
    if (this.#nameWithHash !== undefined) return base + this.#nameWithHash;
    const g = this.#g;
    const batched = g !== undefined && g.hashes.length > 0;
    if (batched && this.#hash === undefined) {
      const flat = flatStepPath(base, this.name, g.hashes, this.#i);
      if (flat !== undefined) return flat;
    }
    const hash = this.#hash ?? (batched ? hexText(g.hashes, this.#i) : this.hash);
    return `${base}${this.name}-${hash}`;
  }

  /** `name@version` for lazy steps, `nameWithHash` otherwise: how dependents refer to this step. */
  get ident(): string {
    return this.version !== undefined ? `${this.name}@${this.version}` : this.nameWithHash;
  }

  /** A short description for logs. */
  toString(): string {
    return `StepSpec(${this.name})`;
  }

  /** Plain-data view for logs and JSON. */
  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      nameWithHash: this.nameWithHash,
      hashAttrs: this.hashAttrs,
      deps: this.deps.map((d) => d.nameWithHash),
      resources: this.resources,
      executor: this.executor,
      overrideOutputPath: this.overrideOutputPath,
      fixedPath: this.fixedPath,
      ref: this.ref,
      version: this.version,
    };
  }
}

// Recognised by isStepSpec() in every copy of this package, bundled or not (see brand.ts).
brand(StepSpec.prototype, STEP_SPEC_BRAND);
