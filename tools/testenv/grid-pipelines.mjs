// Step specs shared by the grid tests and the runner child they start (both sides must build the
// same specs, so a restarted runner finds the jobs the first one recorded).
import { StepSpec } from '@cairn/core';

const STEPS = new URL('./grid-steps.mjs', import.meta.url).href;

/** `count` independent steps of a few seconds each on `executor` (`nap` of grid-steps.mjs). */
export function napSteps(executor, count, tag) {
  return Array.from({ length: count }, (_, i) => new StepSpec({ name: `nap${i}`, executor, ref: { module: STEPS, export: 'nap' }, hashAttrs: { case: 'adopt', i, tag }, resources: { cpu: 1 } }));
}

/** The executor for `scheduler` (`slurm` or `sge`) from the BUILT plugin packages. */
export async function gridExecutor(scheduler, options) {
  if (scheduler === 'slurm') return (await import('@cairn/remote-slurm')).createSlurmExecutor(options);
  if (scheduler === 'sge') return (await import('@cairn/remote-sge')).createSgeExecutor(options);
  throw new Error(`unknown scheduler ${scheduler}`);
}
