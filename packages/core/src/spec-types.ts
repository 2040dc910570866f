/**
 * The types around {@link StepSpec}: how one is built (`StepSpecInit`), what lowering hands a
 * lazy one (`LazySource`, `LazyHooks`, `LoweredGraph`), and the internals Cairn's own modules
 * reach a spec's private scratch through (`SpecInternals`). Types only; spec.ts holds the class.
 */
import type { ArtifactKind } from './artifact.js';
import type { Layout } from './handle.js';
import type { StepSpec } from './spec.js';
import type { FnRef, PathStepFn, Provenance, Resources } from './types.js';

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

/** @internal How a lazy spec derives its fields: lowering (which owns the handle logic) puts them on each {@link LoweredGraph}. */
export interface LazyHooks {
  /** The inputs template (checks the inputs still match the lowered fingerprint). */
  inputs(spec: StepSpec, source: LazySource): unknown;
  /** The fingerprinted canonical text. */
  payload(spec: StepSpec, source: LazySource): string;
  /** The in-process function. */
  fn(spec: StepSpec, source: LazySource): PathStepFn;
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
  /** How its specs derive their inputs, payload and function on first read. */
  readonly hooks: LazyHooks;
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
