/**
 * `materializedConfig`: the exact config a step will receive, with every path resolved against a
 * prefix — Marin's `materialized_config(handle, prefix)` — computed without running or reading
 * anything. For an `apply` step it is the object its function is called with (dependencies as
 * their output paths, `OUT` as its own, runtime arguments included); for a `StepSpec` its
 * `hashAttrs` (its function receives the output path).
 */
import { CairnError } from './errors.js';
import { isArtifactStep, isStepSpec } from './brand.js';
import type { Layout } from './handle.js';
import { lower } from './lower.js';
import { resolvePrefix } from './paths.js';
import type { StepSpec } from './spec.js';
import { resolveInputs } from './template.js';

/** What {@link materializedConfig} returns. */
export interface MaterializedConfig {
  /** The step's name. */
  readonly name: string;
  /** Its identity. */
  readonly nameWithHash: string;
  /** Where its output will be. */
  readonly outputPath: string;
  /** What the step receives: an `apply` step's resolved inputs, a `StepSpec`'s `hashAttrs`. */
  readonly config: unknown;
  /** Runtime arguments (part of `config`, never of the identity), when the step has some. */
  readonly runtime?: Readonly<Record<string, unknown>>;
  /** Each dependency's output path, keyed by its `nameWithHash`. */
  readonly deps: Readonly<Record<string, string>>;
}

/** Options of {@link materializedConfig}. */
export interface MaterializeOptions {
  /** The store prefix the paths are resolved against (a directory or a URL). */
  readonly prefix: string;
  /** The layout unpinned `apply` steps are lowered with, as the runner's `layout`. @default 'content' */
  readonly layout?: Layout;
}

/** The exact config `step` will receive under `prefix`; see the module comment. */
export function materializedConfig(step: unknown, options: MaterializeOptions): MaterializedConfig {
  if (typeof options !== 'object' || options === null) throw new CairnError('CAIRN_CONFIG', 'materializedConfig(step, { prefix }): give the options object with the store prefix, e.g. { prefix: "./store" }.');
  const prefix = resolvePrefix(options.prefix, 'materializedConfig(): prefix');
  let spec: StepSpec;
  if (isStepSpec(step)) spec = step;
  else if (isArtifactStep(step)) spec = lower(step, options.layout === undefined ? {} : { layout: options.layout });
  else throw new CairnError('CAIRN_BAD_DEPENDENCY', `materializedConfig(): the argument is not a step (got ${step === null ? 'null' : typeof step}); pass a handle returned by apply() or a StepSpec.`);
  const outputPath = spec.outputPath(prefix);
  const deps: Record<string, string> = {};
  // An adopted artifact's path is its source (its own output path holds only its status and record).
  for (const d of spec.deps) deps[d.nameWithHash] = d.adoptedSource ?? d.outputPath(prefix);
  const config = spec.kind === 'apply' ? resolveInputs(spec, outputPath, deps) : spec.hashAttrs;
  const runtime = spec.runtime;
  return { name: spec.name, nameWithHash: spec.nameWithHash, outputPath, config, ...(runtime !== undefined ? { runtime } : {}), deps };
}
