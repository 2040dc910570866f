/**
 * The steps a command works on and the run options that name steps, from its arguments:
 * targets (`cairn run pipeline.ts train eval`), `--rebuild STEP` (repeatable), `--rebuild-all`,
 * `--accept-drift [STEP]` (repeatable; alone: every drifted step). `plan`, `graph` and `run`
 * share it, so a plan is made with exactly the options the run would get.
 */
import type { StepSpec } from '@cairn/core';
import type { RunOptions } from '@cairn/runner';
import { usageError } from './errors.js';
import { type LoadedPipeline, selectSteps } from './pipeline.js';

/** The flags of a selection. */
export interface SelectionFlags {
  /** `--rebuild STEP`, repeatable. */
  readonly rebuild?: readonly string[];
  /** `--rebuild-all`. */
  readonly rebuildAll?: boolean;
  /** `--accept-drift` (true) or `--accept-drift STEP`, repeatable. */
  readonly acceptDrift?: readonly string[] | boolean;
}

/** What a command runs or plans. */
export interface Selection {
  readonly targets: readonly StepSpec[];
  readonly options: Pick<RunOptions, 'rebuild' | 'acceptDrift'>;
}

/** Commander's collector for a repeatable option with a value. */
export function collect(value: string, previous: readonly string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** Commander's collector for `--accept-drift [step]` given a step (given alone, commander sets `true`: every step). */
export function collectOptional(value: string, previous: readonly string[] | boolean | undefined): string[] | boolean {
  if (previous === true) return true;
  return [...(Array.isArray(previous) ? previous : []), value];
}

/** Resolves selectors against the pipeline (an unknown name is `CAIRN_NO_SUCH_STEP`, listing what exists). */
export function selection(pipeline: LoadedPipeline, selectors: readonly string[], flags: SelectionFlags): Selection {
  if (flags.rebuildAll === true && flags.rebuild !== undefined && flags.rebuild.length > 0) {
    throw usageError('--rebuild-all and --rebuild STEP were both given.', 'Pass one of them.');
  }
  const targets = selectors.length > 0 ? selectSteps(pipeline.specs, selectors) : pipeline.targets;
  const rebuild = flags.rebuildAll === true ? 'all' : flags.rebuild !== undefined && flags.rebuild.length > 0 ? selectSteps(pipeline.specs, flags.rebuild) : undefined;
  const acceptDrift = flags.acceptDrift === true ? true : Array.isArray(flags.acceptDrift) && flags.acceptDrift.length > 0 ? selectSteps(pipeline.specs, flags.acceptDrift) : undefined;
  return { targets, options: { ...(rebuild !== undefined ? { rebuild } : {}), ...(acceptDrift !== undefined ? { acceptDrift } : {}) } };
}
