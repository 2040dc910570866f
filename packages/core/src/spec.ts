/**
 * `StepSpec`: an immutable, lowered step. Its types are in spec-types.ts; a spec built with
 * `new StepSpec(init)` is checked by spec-init.ts.
 */
import { brand, isStepSpec, STEP_SPEC_BRAND } from './brand.js';
import { canonicalize } from './canonical.js';
import { CairnError } from './errors.js';
import { getFnRef } from './fnref.js';
import { hashOf } from './identity.js';
import { INTERNALS } from './spec-internals.js';
import { flatStepPath, isAbsoluteLocation, joinPath, prefixBase } from './paths.js';
import { checkResources, checkRetries, checkTimeout } from './step-checks.js';
import type { ArtifactKind } from './artifact.js';
import { type PlainFields, plainFields } from './spec-init.js';
import type { HashBatch, LazySource, LoweredGraph, SpecInternals, StepKind, StepSpecInit } from './spec-types.js';
import type { FnRef, PathStepFn, Provenance, Resources } from './types.js';
import { isMutableVersion, validateSegment } from './validate.js';

export type { HashBatch, LazyHooks, LazySource, LoweredGraph, SpecInternals, StepKind, StepSpecInit } from './spec-types.js';


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

/** What a lowered spec derives on first use (and its validated resources). */
interface LazyCache {
  resources?: Resources | undefined;
  fn?: PathStepFn;
  hashAttrs?: Readonly<Record<string, unknown>>;
  inputs?: unknown;
  payload?: string;
}

/** This copy's internals (set by StepSpec's static block, below, and put on its prototype at {@link INTERNALS}). */
let local: SpecInternals;

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
    const plain = plainFields(init);
    this.#deps = plain.deps;
    this.#p = plain.fields;
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
    return (c.fn ??= (this.#g as LoweredGraph).hooks.fn(this, this.#src as LazySource));
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
    return (c.payload ??= (this.#g as LoweredGraph).hooks.payload(this, this.#src as LazySource));
  }

  /** Inputs template of an `apply` step. */
  get inputs(): unknown {
    const p = this.#p;
    if (p !== undefined) return p.inputs;
    const c = this.#cache();
    if (!('inputs' in c)) c.inputs = (this.#g as LoweredGraph).hooks.inputs(this, this.#src as LazySource);
    return c.inputs;
  }

  /**
   * What other Cairn modules may do to a spec without it being part of its public type: the
   * identity pass's batched hashes and traversal marks, and one owner's note (a runner's node).
   * Built once, here, where the private fields are in reach, and put on the prototype for `specInternals` (spec-internals.ts).
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
