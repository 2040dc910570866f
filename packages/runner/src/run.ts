import type { ArtifactStep, StepSpec } from '@cairn/core';
import type { LoadedArtifact } from './context.js';
import { StepRunner } from './runner.js';

/**
 * Runs handles with a default `StepRunner` (prefix from `CAIRN_PREFIX`, else `./.cairn`) and
 * returns the loaded artifacts in argument order: `{ path, value }`.
 *
 * ```ts
 * const [model] = await run(train);
 * ```
 */
export function run<T extends readonly (ArtifactStep<unknown> | StepSpec)[]>(
  ...handles: T
): Promise<{ [K in keyof T]: LoadedArtifact<T[K] extends ArtifactStep<infer R> ? R : unknown> }> {
  return new StepRunner().load(handles) as Promise<{ [K in keyof T]: LoadedArtifact<T[K] extends ArtifactStep<infer R> ? R : unknown> }>;
}
