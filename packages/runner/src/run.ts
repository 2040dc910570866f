import { CairnError, isArtifactStep, StepSpec, type ArtifactStep } from '@cairn/core';
import type { LoadedArtifact } from './context.js';
import { StepRunner, type RunOptions, type StepRunnerOptions } from './runner.js';

/** Options of {@link run}: the runner's (`prefix`, `maxConcurrent`, `executors`…) and the run's (`forceRunFailed`, `signal`…). */
export type RunFunctionOptions = StepRunnerOptions & Omit<RunOptions, 'dryRun'>;

type Handle = ArtifactStep<unknown> | StepSpec;

type Loaded<T extends readonly Handle[]> = { [K in keyof T]: LoadedArtifact<T[K] extends ArtifactStep<infer R> ? R : unknown> };

const RUN_OPTION_KEYS: ReadonlySet<string> = new Set(['forceRunFailed', 'maxConcurrent', 'signal', 'handleSigint', 'rebuild', 'acceptDrift']);

function isHandle(v: unknown): v is Handle {
  return v instanceof StepSpec || isArtifactStep(v);
}

/**
 * Runs handles with a `StepRunner` and returns the loaded artifacts in argument order:
 * `{ path, value }`. A plain object after the handles is options: the runner's (prefix,
 * executors, …; the prefix defaults to `CAIRN_PREFIX`, else `./.cairn`) and the run's.
 *
 * ```ts
 * const [model] = await run(train);
 * const [a, b] = await run(a, b, { prefix: './store', maxConcurrent: 4 });
 * ```
 */
export function run<T extends readonly Handle[]>(...handles: T): Promise<Loaded<T>>;
export function run<T extends readonly Handle[]>(...args: [...handles: T, options: RunFunctionOptions]): Promise<Loaded<T>>;
export function run(...args: unknown[]): Promise<LoadedArtifact[]> {
  const last = args[args.length - 1];
  const hasOptions = args.length > 0 && typeof last === 'object' && last !== null && !isHandle(last);
  const handles = hasOptions ? args.slice(0, -1) : args;
  const options = (hasOptions ? last : {}) as RunFunctionOptions;
  if (hasOptions && handles.length === 0) {
    return Promise.reject(new CairnError('CAIRN_BAD_DEPENDENCY', 'run(): no step handles before the options; pass the handles returned by apply() first: run(a, b, { prefix }).'));
  }
  const runnerOptions: Record<string, unknown> = {};
  const runOptions: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(options)) (RUN_OPTION_KEYS.has(k) ? runOptions : runnerOptions)[k] = v;
  // maxConcurrent belongs to both: the runner checks it at construction.
  if (options.maxConcurrent !== undefined) runnerOptions.maxConcurrent = options.maxConcurrent;
  return new StepRunner(runnerOptions as StepRunnerOptions).load(handles as Handle[], runOptions as RunOptions);
}
