import { canonicalize } from './canonical.js';
import { CairnError } from './errors.js';
import { getFnRef, getRemoteOptions } from './fnref.js';
import { hashOf } from './identity.js';
import { isAbsoluteLocation, joinPath } from './paths.js';
import type { FnRef, PathStepFn, Provenance, Resources } from './types.js';
import { validateSegment } from './validate.js';

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
  /** @internal Lowering: the handle this `apply` spec is lowered from (only `deps`, `fingerprint`, `ref` and `provenance` are read besides). */
  source?: LazySource | undefined;
}

/**
 * @internal What lowering hands a lazy (`apply`) spec: the source handle, from which the
 * rarely read fields are derived on first use instead of being built for every step.
 */
export interface LazySource {
  readonly name: string;
  readonly version: string;
  readonly pin: string | undefined;
  readonly resources: Resources | undefined;
  readonly executor: string | undefined;
  readonly expectedFingerprint: string | undefined;
  readonly retries: number | undefined;
  readonly timeoutMs: number | undefined;
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

function deepFreezeCopy<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return Object.freeze(value.map(deepFreezeCopy)) as T;
  const proto = Object.getPrototypeOf(value) as object | null;
  if (proto !== Object.prototype && proto !== null) return value; // Map/Set/Date/bytes: encoded already; kept as given
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = deepFreezeCopy(v);
  return Object.freeze(out) as T;
}

function checkRetries(name: string, value: number | undefined): number {
  const retries = value ?? 0;
  if (!Number.isInteger(retries) || retries < 0) {
    throw new CairnError('CAIRN_INVALID_SPEC', `Step "${name}": retries must be a non-negative integer, got ${String(value)}.`, { step: name });
  }
  return retries;
}

function checkTimeout(name: string, value: number | undefined): number | undefined {
  if (value !== undefined && (typeof value !== 'number' || !(value > 0))) {
    throw new CairnError('CAIRN_INVALID_SPEC', `Step "${name}": timeoutMs must be a positive number of milliseconds.`, { step: name });
  }
  return value;
}

function checkResources(name: string, r: Resources | undefined): Resources | undefined {
  if (r === undefined) return undefined;
  const bad = (what: string): never => {
    throw new CairnError('CAIRN_INVALID_SPEC', `Step "${name}": invalid resources: ${what}.`, { step: name });
  };
  if (typeof r !== 'object' || r === null) bad('expected an object like { cpu: 2, memoryGb: 8, gpus: 1 }');
  const nonNeg = (k: string, v: unknown) => {
    if (v !== undefined && (typeof v !== 'number' || !Number.isFinite(v) || v < 0)) bad(`${k} must be a non-negative number, got ${String(v)}`);
  };
  nonNeg('cpu', r.cpu);
  nonNeg('memoryGb', r.memoryGb);
  nonNeg('timeLimit', r.timeLimit);
  if (typeof r.gpus === 'object' && r.gpus !== null) nonNeg('gpus.count', r.gpus.count);
  else nonNeg('gpus', r.gpus);
  return deepFreezeCopy(r);
}

/**
 * An immutable, lowered step: name, identity attributes, dependencies and how to run it.
 * Identity (`nameWithHash`) is Merkle over `{ name, hashAttrs, sorted deps' nameWithHash }`
 * (docs/identity.md); prefixes, paths, resources and executors never enter it.
 */
export class StepSpec {
  /** Step name. */
  readonly name: string;
  /** Upstream specs (frozen). */
  readonly deps: readonly StepSpec[];
  /** Declared resources. */
  readonly resources: Resources | undefined;
  /** Requested executor. */
  readonly executor: string | undefined;
  /** Whether the step writes its own artifact record. */
  readonly writesRecord: boolean;
  /** Module + export, when the function can be re-imported elsewhere. */
  readonly ref: FnRef | undefined;
  /** How the function is called. */
  readonly kind: StepKind;
  /** Artifact version (lazy steps). */
  readonly version: string | undefined;
  /** Config fingerprint (lazy steps). */
  readonly fingerprint: string | undefined;
  /** Pinned expected fingerprint. */
  readonly expectedFingerprint: string | undefined;
  /** True when the version ends in `dev`: always rebuilt. */
  readonly mutable: boolean;
  /** Retries after failure. */
  readonly retries: number;
  /** Per-attempt timeout (ms). */
  readonly timeoutMs: number | undefined;
  /** Provenance of the lowering. */
  readonly provenance: Provenance | undefined;
  /** @internal the handle a lowered `apply` spec derives its lazy fields from. */
  #source: LazySource | undefined;
  /** @internal `fn`, or (lowered) its cache. */
  #fn: PathStepFn | undefined;
  /** @internal `hashAttrs`, or (lowered) its cache. */
  #hashAttrs: Readonly<Record<string, unknown>> | undefined;
  /** @internal `inputs`, or (lowered) its cache. */
  #inputs: unknown;
  /** @internal `fingerprintPayload`, or (lowered) its cache. */
  #payload: string | undefined;
  /** @internal `overrideOutputPath` (lowered: the handle's pin). */
  #override: string | undefined;
  /** @internal canonical hashAttrs; dropped once the hash is known (recomputed on demand). */
  #attrsCanon: string | undefined;
  /** @internal the Merkle hash, computed on first use. */
  #hash: string | undefined;
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
      // Lowering: the handle was validated by apply(); its rarely read fields stay on it.
      const name = source.name;
      this.name = name;
      this.deps = Object.freeze(init.deps as StepSpec[]);
      this.resources = checkResources(name, source.resources);
      this.executor = source.executor;
      this.writesRecord = false;
      this.ref = init.ref;
      this.kind = 'apply';
      this.version = source.version;
      this.fingerprint = init.fingerprint;
      this.expectedFingerprint = source.expectedFingerprint;
      this.mutable = source.version.endsWith('dev');
      this.retries = checkRetries(name, source.retries);
      this.timeoutMs = checkTimeout(name, source.timeoutMs);
      this.provenance = init.provenance;
      this.#source = source;
      this.#override = source.pin;
      Object.freeze(this);
      return;
    }
    const name = validateSegment('name', init.name);
    const deps = init.deps ?? [];
    if (!Array.isArray(deps)) throw new CairnError('CAIRN_BAD_DEPENDENCY', `Step "${name}": deps must be an array of StepSpec.`, { step: name });
    for (let i = 0; i < deps.length; i++) {
      if (!(deps[i] instanceof StepSpec)) {
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
    this.#attrsCanon = canonicalize(attrs, { path: 'hashAttrs', step: name });
    this.name = name;
    this.#fn = init.fn;
    this.#hashAttrs = deepFreezeCopy(attrs);
    this.deps = Object.freeze([...deps]);
    const remoteOpts = getRemoteOptions(init.fn);
    this.resources = checkResources(name, init.resources ?? remoteOpts?.resources);
    this.executor = init.executor ?? remoteOpts?.executor;
    if (init.overrideOutputPath !== undefined && (typeof init.overrideOutputPath !== 'string' || init.overrideOutputPath === '')) {
      throw new CairnError('CAIRN_INVALID_SPEC', `Step "${name}": overrideOutputPath must be a non-empty string.`, { step: name });
    }
    this.#override = init.overrideOutputPath;
    this.writesRecord = init.writesRecord ?? false;
    this.#payload = init.fingerprintPayload;
    this.ref = init.ref ?? getFnRef(init.fn);
    this.kind = init.kind ?? 'path';
    this.#inputs = init.inputs;
    this.version = init.version;
    this.fingerprint = init.fingerprint;
    this.expectedFingerprint = init.expectedFingerprint;
    this.mutable = init.version !== undefined && init.version.endsWith('dev');
    this.retries = checkRetries(name, init.retries);
    this.timeoutMs = checkTimeout(name, init.timeoutMs);
    this.provenance = init.provenance;
    Object.freeze(this);
  }

  /** In-process function; absent on specs decoded from bytes (they run through `ref`). */
  get fn(): PathStepFn | undefined {
    const source = this.#source;
    if (source === undefined) return this.#fn;
    return (this.#fn ??= (lazyHooks as LazyHooks).fn(this, source));
  }

  /** Identity attributes (deep-frozen). */
  get hashAttrs(): Readonly<Record<string, unknown>> {
    let attrs = this.#hashAttrs;
    if (attrs === undefined) {
      // Lowered `apply` spec: rebuilt from its own fields, in the order lowering always used.
      const deps = this.deps;
      const idents = new Array<string>(deps.length);
      for (let i = 0; i < deps.length; i++) idents[i] = (deps[i] as StepSpec).ident;
      const a: Record<string, unknown> = { version: this.version, fingerprint: this.fingerprint, deps: Object.freeze(idents) };
      if (this.expectedFingerprint !== undefined) a.expectedFingerprint = this.expectedFingerprint;
      attrs = this.#hashAttrs = Object.freeze(a);
    }
    return attrs;
  }

  /** Output location override. */
  get overrideOutputPath(): string | undefined {
    const o = this.#override;
    if (o !== undefined || this.#source === undefined) return o;
    return `${this.name}/${this.version as string}`;
  }

  /** The fingerprinted canonical text (diagnostics only). */
  get fingerprintPayload(): string | undefined {
    const source = this.#source;
    if (source === undefined) return this.#payload;
    return (this.#payload ??= (lazyHooks as LazyHooks).payload(this, source));
  }

  /** Inputs template of an `apply` step. */
  get inputs(): unknown {
    const source = this.#source;
    if (source === undefined || this.#inputs !== undefined) return this.#inputs;
    return (this.#inputs = (lazyHooks as LazyHooks).inputs(this, source));
  }

  /** @internal Canonical encoding of `hashAttrs` (what identity hashes). */
  get attrsCanonical(): string {
    return this.#attrsCanon ?? canonicalize(this.hashAttrs, { path: 'hashAttrs', step: this.name });
  }

  /** @internal Sets the hash computed by a batch pass. */
  _setHash(hash: string): void {
    this.#hash = hash;
    // Identity is fixed now; the canonical text is only needed again for diagnostics.
    this.#attrsCanon = undefined;
  }

  /** @internal Traversal state in walk `epoch` (0 = untouched). */
  _visitState(epoch: number): number {
    return this.#visit >>> 2 === epoch ? this.#visit & 3 : 0;
  }

  /** @internal Sets traversal state for walk `epoch`. */
  _setVisit(epoch: number, state: number): void {
    this.#visit = epoch * 4 + state;
  }

  /** @internal Node index for walk `epoch`, or -1. */
  _slot(epoch: number): number {
    return this.#visit === epoch * 4 + 3 ? this.#slot : -1;
  }

  /** @internal Assigns node index `slot` in walk `epoch`. */
  _setSlot(epoch: number, slot: number): void {
    this.#visit = epoch * 4 + 3;
    this.#slot = slot;
  }

  /** @internal The hash if already computed. */
  _peekHash(): string | undefined {
    return this.#hash;
  }

  /** 16 lowercase hex digits: XXH64 of the canonical identity bytes. */
  get hash(): string {
    return this.#hash ?? hashOf(this);
  }

  /** `${name}-${hash}`: the step's identity. */
  get nameWithHash(): string {
    return `${this.name}-${this.hash}`;
  }

  /** The location of this step's output under `prefix` (exactly one `/` between parts). */
  outputPath(prefix: string): string {
    const o = this.overrideOutputPath;
    if (o !== undefined) return isAbsoluteLocation(o) ? o : joinPath(prefix, o);
    return joinPath(prefix, this.nameWithHash);
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
      ref: this.ref,
      version: this.version,
    };
  }
}
