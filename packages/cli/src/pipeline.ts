/**
 * Pipeline files: a module that exports its target handles as `targets` (an array, or one
 * handle), or as its default export. Loading lowers them; nothing runs.
 */
import { indexSpecs, isArtifactStep, isStepSpec, lower, type ArtifactStep, type StepSpec } from '@cairn/core';
import { cliError } from './errors.js';
import { importUserModule } from './load-module.js';

/** A loaded, lowered pipeline. */
export interface LoadedPipeline {
  /** Absolute path of the pipeline file. */
  readonly file: string;
  /** The lowered targets (roots of the graph). */
  readonly targets: readonly StepSpec[];
  /** Every spec reachable from the targets, dependencies first. */
  readonly specs: readonly StepSpec[];
}

function asTargetList(value: unknown): unknown[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (Array.isArray(value)) return value;
  if (isArtifactStep(value) || isStepSpec(value)) return [value];
  return undefined;
}

/** Imports `file` and lowers its targets (unpinned steps in `layout`). Bad files and bad graphs throw usage-class errors (exit 2). */
export async function loadPipeline(file: string, cwd = process.cwd(), layout: 'content' | 'versioned' = 'content'): Promise<LoadedPipeline> {
  const { path, module } = await importUserModule(file, 'pipeline', cwd);
  // A TypeScript file loaded as CommonJS arrives wrapped: its exports sit under `default`.
  const inner = (typeof module.default === 'object' && module.default !== null ? module.default : {}) as Record<string, unknown>;
  const list = asTargetList(module.targets) ?? asTargetList(module.default) ?? asTargetList(inner.targets) ?? asTargetList(inner.default);
  if (list === undefined) {
    throw cliError(
      'CAIRN_PIPELINE_LOAD',
      `The pipeline ${path} exports no targets.`,
      'Export the handles to build: `export const targets = [model, evaluation];` (or a default export).',
    );
  }
  if (list.length === 0) throw cliError('CAIRN_PIPELINE_LOAD', `The pipeline ${path} exports an empty targets list.`, 'Add at least one handle returned by apply().');
  list.forEach((t, i) => {
    if (!isArtifactStep(t) && !isStepSpec(t)) {
      throw cliError(
        'CAIRN_PIPELINE_LOAD',
        `targets[${i}] in ${path} is not a step handle (got ${t === null ? 'null' : typeof t}).`,
        'Export handles returned by apply() (or StepSpecs).',
      );
    }
  });
  const targets = lower(list as (ArtifactStep<unknown> | StepSpec)[], { layout });
  const { nodes } = indexSpecs(targets);
  return { file: path, targets, specs: nodes };
}

/**
 * Picks steps by name for `cairn run pipeline.ts a b`: each selector matches a step's name
 * exactly or a prefix of its `nameWithHash`. An unknown selector is a usage error listing
 * what exists.
 */
export function selectSteps(specs: readonly StepSpec[], selectors: readonly string[]): StepSpec[] {
  const picked: StepSpec[] = [];
  for (const sel of selectors) {
    const matches = findSteps(specs, sel);
    if (matches.length === 0) {
      const names = [...new Set(specs.map((s) => s.name))];
      const shown = names.slice(0, 20).join(', ') + (names.length > 20 ? `, … (${names.length} in all)` : '');
      throw cliError('CAIRN_NO_SUCH_STEP', `No step in the pipeline matches "${sel}".`, `Steps: ${shown}.`);
    }
    for (const m of matches) if (!picked.includes(m)) picked.push(m);
  }
  return picked;
}

/** The steps of `pipeline` that `selector` matches ({@link findSteps}); none is `CAIRN_NO_SUCH_STEP` listing what exists. */
export function stepsMatching(pipeline: LoadedPipeline, selector: string): StepSpec[] {
  const specs = findSteps(pipeline.specs, selector);
  if (specs.length === 0) {
    throw cliError('CAIRN_NO_SUCH_STEP', `No step in ${pipeline.file} matches "${selector}".`, `Steps: ${[...new Set(pipeline.specs.map((s) => s.name))].slice(0, 20).join(', ')}.`);
  }
  return specs;
}

/** Steps whose name is `selector`, else whose `nameWithHash` starts with it. */
export function findSteps(specs: readonly StepSpec[], selector: string): StepSpec[] {
  const byName = specs.filter((s) => s.name === selector);
  return byName.length > 0 ? byName : specs.filter((s) => s.nameWithHash.startsWith(selector));
}
