import { type AnyKind, type ArtifactKind, checkKind, type KindValue, type ResultKind } from './artifact.js';
import { ARTIFACT_STEP_BRAND, brand, isArtifactStep, isStepSpec } from './brand.js';
import { CairnError } from './errors.js';
import { getFnRef, getRemoteOptions } from './fnref.js';
import { checkKnownKeys, describeValue } from './known-keys.js';
import { MAX_VALUE_DEPTH, formatKeyPath, tooDeep } from './limits.js';
import { lower as lowerImpl } from './lower.js';
import { checkLocation } from './paths.js';
import { markInputsMutable } from './mutable-inputs.js';
import { isOut, type Out } from './out.js';
import { snapshotInputs } from './snapshot.js';
import type { Secret } from './secret.js';
import type { StepSpec } from './spec.js';
import { APPLY_KEYS, checkLayout, checkRuntime } from './step-checks.js';
import type { Resources, StepContext } from './types.js';
import { checkExecutorName, validateSegment } from './validate.js';

/**
 * The lazy form of an input value: wherever the step function expects a string, a
 * dependency handle (resolving to its output path), `OUT` or a `secret('NAME')` (its value,
 * resolved by the runner at the call) may stand instead.
 */
export type Lazy<T> = T extends string
  ? string | ArtifactStep<unknown> | Out | Secret
  : T extends readonly (infer E)[]
    ? readonly Lazy<E>[]
    : T extends (...args: never[]) => unknown
      ? T
      : T extends object
        ? { [K in keyof T]: Lazy<T[K]> }
        : T;

/** A step function in the `apply` form: receives its resolved inputs and the run context. */
export type ApplyFn<I, R> = (inputs: I, ctx: StepContext) => R | Promise<R>;

/**
 * Where an `apply` step's output lives when it has no pin (docs/identity.md):
 * - `'content'`: `{name}/{version}-{hash}`, the step's Merkle identity in the path, so a change
 *   anywhere upstream gives the step and every dependent new locations (rebuilt; the old ones
 *   stay until `cairn clean`).
 * - `'versioned'`: `{name}/{version}`, Marin's fixed location. A config change keeps the path:
 *   the runner finds the drift from the record and refuses to serve it unless accepted.
 */
export type Layout = 'content' | 'versioned';

/** Options of {@link apply}. */
export interface ApplyOptions<I, R> {
  /** Step name: one path segment. */
  name: string;
  /** The step function. Use `defineStep` for steps that run outside this process. */
  fn: ApplyFn<I, R>;
  /** Artifact version, e.g. `"2026.11.30"` or `"v3"`; ending in `dev` makes it mutable (always rebuilt). */
  version: string;
  /** Inputs: any dependency handle inside (arrays, plain objects) becomes a dependency. */
  inputs: Lazy<I>;
  /**
   * Fixed output location (see {@link Layout} for the default). A relative pin is normalised and
   * must stay inside the prefix (not empty, not `.`, no way out through `..`, no `.cairn`
   * segment); an absolute path or URL is used as given (your explicit choice). Like the
   * `'versioned'` layout, a pin keeps one location across config changes: drift is checked.
   */
  pin?: string;
  /** Default location of this step when it has no pin. @default the lowering's layout (`'content'` unless `lower()` or the runner is given another) */
  layout?: Layout;
  /** Resources; never part of identity. */
  resources?: Resources;
  /** Executor name; never part of identity. */
  executor?: string;
  /** Pin the config fingerprint: a mismatch (now or against the recorded one) is an error. */
  expectedFingerprint?: string;
  /** Retries after failure. @default 0 */
  retries?: number;
  /** Per-attempt timeout (ms). */
  timeoutMs?: number;
  /**
   * What the step leaves at its output path and how to load it (`artifacts.json()`, `artifacts.dir`,
   * a kind of your own): `run()`, `resolve()` and `ctx.resolved(dep)` return the loaded value,
   * typed by the kind. Recorded by name; never part of the step's identity. @default the returned value
   */
  artifact?: AnyKind;
}

/**
 * Options of {@link apply} with runtime arguments: `runtime` holds inputs that reach the step
 * function like the others but never enter its identity (worker counts, log levels, credential
 * paths). `inputs` holds the rest: the two must not share a key.
 */
export interface ApplyRuntimeOptions<I, R, RT extends Partial<I>> extends Omit<ApplyOptions<I, R>, 'inputs'> {
  /** The identity-bearing inputs: every input of the function except those in `runtime`. */
  inputs: Lazy<Omit<I, keyof RT>>;
  /** Runtime arguments: plain data (no handles, no `OUT`), recorded in the record, never hashed. */
  runtime: RT;
}

/** Objects an input keeps uncopied that cannot change what is fingerprinted: handles (by `name@version`) and `OUT`. */
function isFixedInput(v: object): boolean {
  return isArtifactStep(v) || isOut(v);
}

/**
 * A lazy handle to an artifact: nothing runs until it is lowered and given to a runner.
 * `T` is the value it loads as: its kind's (`artifact`), else what the step function returns.
 * Handles compare by identity.
 */
export class ArtifactStep<T = unknown> {
  /** Step name. */
  readonly name: string;
  /** Artifact version. */
  readonly version: string;
  /** The step function. */
  readonly fn: ApplyFn<never, T>;
  /** The inputs as given (lazy). */
  readonly inputs: unknown;
  /** Dependencies found in `inputs`, deduplicated, first-seen order. */
  readonly deps: readonly ArtifactStep<unknown>[];
  /** Output location override. */
  readonly pin: string | undefined;
  /** Default location when unpinned (undefined: the lowering's). */
  readonly layout: Layout | undefined;
  /** Runtime arguments (deep-frozen copy), merged into the inputs the function receives; never hashed. */
  readonly runtime: Readonly<Record<string, unknown>> | undefined;
  /** Declared resources. */
  readonly resources: Resources | undefined;
  /** Requested executor. */
  readonly executor: string | undefined;
  /** Pinned fingerprint. */
  readonly expectedFingerprint: string | undefined;
  /** Retries after failure. */
  readonly retries: number | undefined;
  /** Per-attempt timeout (ms). */
  readonly timeoutMs: number | undefined;
  /** The artifact kind given to `apply()` (undefined: the returned value). */
  readonly artifact: ArtifactKind<unknown> | undefined;
  /** For an artifact registered with `adopt()`: the existing data it stands for (dependents get this path). */
  readonly adoptedSource: string | undefined;
  /** Type-level brand (never set at run time): the step's result type. */
  declare readonly __result?: T;
  /** @internal lowering scratch: epoch of the lowering that last touched this handle. */
  #epoch = 0;
  /** @internal lowering scratch: 1 = on the stack, 2 = lowered. */
  #state = 0;
  /** @internal lowering scratch: the node index of epoch `#epoch` (a small integer: no heap pointer from old handles to new specs). */
  #index = -1;

  /** @internal Use {@link apply}. */
  constructor(opts: ApplyOptions<never, T> & { runtime?: unknown }, adoptedSource?: string) {
    if (typeof opts !== 'object' || opts === null) {
      throw new CairnError('CAIRN_INVALID_SPEC', `apply(options): options must be an object like { name, version, fn, inputs }, got ${describeValue(opts)}.`);
    }
    this.name = validateSegment('name', opts.name);
    checkKnownKeys(opts, APPLY_KEYS, `apply() for step "${this.name}"`, { step: this.name });
    this.version = validateSegment('version', opts.version, this.name);
    if (typeof opts.fn !== 'function') {
      throw new CairnError('CAIRN_INVALID_SPEC', `Step "${this.name}": fn must be a function.`, { step: this.name });
    }
    this.fn = opts.fn;
    // A copy (snapshot.ts): changing the given object later cannot add a hidden dependency.
    const snapshot = snapshotInputs(opts.inputs, isFixedInput);
    this.inputs = snapshot.value;
    if (!snapshot.sealed) markInputsMutable(this);
    this.deps = Object.freeze(findDeps(this.inputs, this.name));
    this.pin = opts.pin === undefined ? undefined : checkLocation('pin', opts.pin, this.name);
    this.layout = checkLayout(this.name, opts.layout);
    this.runtime = checkRuntime(this.name, opts.runtime, opts.inputs);
    const remoteOpts = getRemoteOptions(opts.fn);
    // An explicit null is kept (and refused when lowered), not read as "not given".
    this.resources = opts.resources === undefined ? remoteOpts?.resources : opts.resources;
    if (opts.executor !== undefined) checkExecutorName(opts.executor, `Step "${this.name}": executor`, 'CAIRN_INVALID_SPEC', this.name);
    this.executor = opts.executor ?? remoteOpts?.executor;
    if (opts.expectedFingerprint !== undefined && typeof opts.expectedFingerprint !== 'string') {
      throw new CairnError('CAIRN_INVALID_SPEC', `Step "${this.name}": expectedFingerprint must be the 16-hex-digit string a lowering reported, got ${describeValue(opts.expectedFingerprint)}.`, { step: this.name });
    }
    this.expectedFingerprint = opts.expectedFingerprint;
    this.retries = opts.retries;
    this.timeoutMs = opts.timeoutMs;
    this.artifact = checkKind(this.name, opts.artifact);
    this.adoptedSource = adoptedSource;
    Object.freeze(this);
  }

  /** @internal Lowering state in lowering `epoch` (0 = untouched). */
  _state(epoch: number): number {
    return this.#epoch === epoch ? this.#state : 0;
  }

  /** @internal Records lowering state (and the node index once lowered). */
  _mark(epoch: number, state: number, index = -1): void {
    this.#epoch = epoch;
    this.#state = state;
    this.#index = index;
  }

  /** @internal The node index lowered in `epoch`, or -1. */
  _index(epoch: number): number {
    return this.#epoch === epoch ? this.#index : -1;
  }

  /** `name@version`: how dependents refer to this artifact. */
  get ident(): string {
    return `${this.name}@${this.version}`;
  }

  /** True when the function can be re-imported elsewhere (it was marked with `defineStep`). */
  get isReferenced(): boolean {
    return getFnRef(this.fn) !== undefined;
  }

  /** Lowers this handle (and everything upstream) to its `StepSpec` graph. Pure; see `lower()`. */
  lower(): StepSpec {
    return lowerImpl(this as ArtifactStep<unknown>);
  }

  toString(): string {
    return `ArtifactStep(${this.ident})`;
  }
}

// A brand on the prototype (not per instance: that would slow every handle down).
brand(ArtifactStep.prototype, ARTIFACT_STEP_BRAND);


function isPlainObject(v: object): boolean {
  const p = Object.getPrototypeOf(v) as object | null;
  return p === Object.prototype || p === null;
}

/** Every handle inside `inputs` (arrays and plain objects), deduplicated, first-seen order. */
function findDeps(inputs: unknown, step: string): ArtifactStep<unknown>[] {
  const found: ArtifactStep<unknown>[] = [];
  let foundSet: Set<unknown> | undefined;
  const active: object[] = [];
  const keys: (string | number)[] = [];
  const walk = (v: unknown): void => {
    if (typeof v !== 'object' || v === null) return;
    if (isArtifactStep(v)) {
      // Linear scan while small; a set once a step has many dependencies (wide fan-in).
      if (foundSet === undefined && found.length > 16) foundSet = new Set(found);
      if (foundSet ? !foundSet.has(v) : !found.includes(v)) {
        found.push(v);
        foundSet?.add(v);
      }
      return;
    }
    if (isStepSpec(v)) {
      throw new CairnError(
        'CAIRN_BAD_DEPENDENCY',
        `Step "${step}": ${formatKeyPath('inputs', keys)} is a lowered StepSpec; pass the ArtifactStep handle from apply() instead.`,
        { step },
      );
    }
    if (active.includes(v)) return; // canonical encoding reports cycles with their path
    if (active.length >= MAX_VALUE_DEPTH && (Array.isArray(v) || isPlainObject(v))) throw tooDeep(step, 'inputs', keys);
    if (Array.isArray(v)) {
      active.push(v);
      for (let i = 0; i < v.length; i++) {
        keys.push(i);
        walk(v[i]);
        keys.pop();
      }
      active.pop();
    } else if (isPlainObject(v)) {
      active.push(v);
      for (const k in v) {
        keys.push(k);
        walk((v as Record<string, unknown>)[k]);
        keys.pop();
      }
      active.pop();
    }
  };
  walk(inputs);
  return found;
}

/** The value type of a step with kind `K` whose function returns `R`. */
export type LoadedValue<K, R> = K extends ResultKind ? R : KindValue<K>;

/**
 * Declares a lazy step with runtime arguments: inputs that reach the function but never its
 * identity (changing them rebuilds nothing).
 *
 * ```ts
 * apply({ name: 'train', fn: train, version: 'v1', inputs: { data, out: OUT, lr: 3e-4 },
 *   runtime: { numWorkers: 8 } });
 * ```
 */
export function apply<I, R, RT extends Partial<I>, K extends AnyKind>(options: ApplyRuntimeOptions<I, R, RT> & { artifact: K }): ArtifactStep<LoadedValue<K, Awaited<R>>>;
export function apply<I, R, RT extends Partial<I>>(options: ApplyRuntimeOptions<I, R, RT>): ArtifactStep<Awaited<R>>;

// The plain form is declared last: when no form matches, TypeScript reports the last one's
// error, and for a typo in an input name that is "'tokns' does not exist in type …", naming it
// (with the runtime form last it said that `runtime` was missing).
/**
 * Declares a lazy step. Nothing runs: the handle is lowered to a `StepSpec` graph by
 * `lower()` and executed by a `StepRunner`.
 *
 * ```ts
 * const tokens = apply({ name: 'tokenize', fn: tokenize, version: '2026.11.30',
 *   inputs: { corpus: raw, out: OUT, vocab: 32000 } });
 * ```
 *
 * With `artifact`, the handle loads as the kind's value:
 *
 * ```ts
 * const stats = apply({ name: 'stats', fn: count, version: 'v1', inputs: { out: OUT }, artifact: artifacts.json<Stats>() });
 * const [loaded] = await run(stats); // loaded.value: Stats
 * ```
 */
export function apply<I, R, K extends AnyKind>(options: ApplyOptions<I, R> & { artifact: K }): ArtifactStep<LoadedValue<K, Awaited<R>>>;
export function apply<I, R>(options: ApplyOptions<I, R>): ArtifactStep<Awaited<R>>;
export function apply<I, R>(options: ApplyOptions<I, R> | ApplyRuntimeOptions<I, R, Partial<I>>): ArtifactStep<unknown> {
  return new ArtifactStep<unknown>(options as unknown as ApplyOptions<never, unknown>);
}
