/**
 * Adopted artifacts (Marin's `ArtifactStep.adopt`): data that exists already (a public data set,
 * a checkpoint someone else trained) registered as an artifact that `apply` steps can depend on.
 *
 * An adopted artifact is a step of its own whose inputs are its source and config (so both are
 * in its identity). Nothing is ever written into the source: its status and record live in
 * Cairn's store, at `outputPath(prefix)` like any step's (`{name}/{version}-{hash}` in the content
 * layout), and dependents receive the source as its path. The runner checks the source exists
 * before the adopted step is recorded and before each dependent starts (`CAIRN_ADOPT_MISSING`).
 */
import { type AnyKind, artifacts, type DirArtifact, type KindValue } from './artifact.js';
import { CairnError } from './errors.js';
import { ArtifactStep } from './handle.js';
import { checkKnownKeys, describeValue } from './known-keys.js';
import { checkLocation, hasScheme } from './paths.js';
import { validateSegment } from './validate.js';

/** Options of {@link adopt}. */
export interface AdoptOptions<K extends AnyKind> {
  /** Artifact name: one path segment. */
  name: string;
  /** Artifact version (e.g. the data set's release). */
  version: string;
  /** Where the data is: an absolute local path, or a URL on a registered store (`s3://…`). Never written to. */
  source: string;
  /** How dependents load it (`ctx.resolved(dep)`, `run()`). @default artifacts.dir */
  kind?: K;
  /** Anything else that defines the data (a revision, a split…): part of the identity, recorded. @default {} */
  config?: Readonly<Record<string, unknown>>;
}

const ADOPT_KEYS: ReadonlySet<string> = new Set(['name', 'version', 'source', 'kind', 'config']);

/**
 * The error of `ctx.local()` for an adopted artifact whose source is a URL: object stores fetch
 * built outputs (with a status and record), and nothing is ever written into a source.
 */
export function adoptedNotLocal(step: string, source: string): CairnError {
  return new CairnError(
    'CAIRN_STORE',
    `Adopted artifact "${step}": its source ${source} is not on this machine, and an adopted URL cannot be downloaded as a step output (it has no status or record, and Cairn writes none there). Give it a kind whose load reads the URL itself, or adopt a local copy.`,
    { step },
  );
}

/** The step function of every adopted artifact: there is nothing to compute (the runner checks the source). */
function adopted(): undefined {
  return undefined;
}

/**
 * Registers existing data as an artifact usable as a dependency of `apply` steps.
 *
 * ```ts
 * const corpus = adopt({ name: 'fineweb', version: '2024.07', source: '/data/fineweb', config: { split: 'train' } });
 * const tok = apply({ name: 'tokenize', fn: tokenize, version: 'v1', inputs: { corpus, out: OUT } });
 * ```
 *
 * Changing `source` or `config` gives the artifact (and everything downstream) a new identity.
 */
export function adopt<K extends AnyKind = typeof artifacts.dir>(options: AdoptOptions<K>): ArtifactStep<AnyKind extends K ? DirArtifact : KindValue<K>> {
  if (typeof options !== 'object' || options === null) {
    throw new CairnError('CAIRN_INVALID_SPEC', `adopt(options): options must be an object like { name, version, source }, got ${describeValue(options)}.`);
  }
  const name = validateSegment('name', options.name);
  checkKnownKeys(options, ADOPT_KEYS, `adopt() for "${name}"`, { step: name });
  const source: unknown = options.source;
  if (typeof source !== 'string' || !(source.startsWith('/') || hasScheme(source))) {
    throw new CairnError(
      'CAIRN_INVALID_PATH',
      `Adopted artifact "${name}": source must be an absolute path or a URL on a registered store, got ${describeValue(source)}; resolve a relative path first (path.resolve(…)): the source is part of the artifact's identity.`,
      { step: name },
    );
  }
  const config = options.config ?? {};
  if (typeof config !== 'object' || config === null || Array.isArray(config)) {
    throw new CairnError('CAIRN_INVALID_SPEC', `Adopted artifact "${name}": config must be a plain object, got ${describeValue(config)}.`, { step: name });
  }
  // Normalised like a pin (`//`, `.`, trailing `/`), so one directory written two ways is one identity.
  const at = checkLocation('pin', source, name);
  return new ArtifactStep(
    { name, version: options.version, fn: adopted, inputs: { source: at, config } as never, executor: 'inline', artifact: options.kind ?? artifacts.dir },
    at,
  ) as ArtifactStep<never>;
}
