/** A dry-run plan for the CLI (the runner's `plan`, with the CLI's state names). */
import type { Plan, PlanState, RunOptions } from '@cairn/runner';
import type { EffectiveConfig } from './config.js';
import type { StepState } from './graph/model.js';
import { makeRunner } from './make-runner.js';
import type { LoadedPipeline } from './pipeline.js';
import type { StepSpec } from '@cairn/core';

/** One planned step. */
export interface CliPlanStep {
  readonly name: string;
  readonly nameWithHash: string;
  /** 16-hex hash. */
  readonly hash: string;
  readonly state: StepState;
  readonly reason: string;
  readonly outputPath: string;
}

/** A plan. */
export interface CliPlan {
  readonly prefix: string;
  readonly steps: readonly CliPlanStep[];
  readonly counts: Readonly<Partial<Record<PlanState, number>>>;
}

/** Converts the runner's plan. */
export function fromRunnerPlan(plan: Plan): CliPlan {
  return {
    prefix: plan.prefix,
    counts: plan.counts,
    steps: plan.steps.map((s) => ({ name: s.name, nameWithHash: s.nameWithHash, hash: s.nameWithHash.slice(s.name.length + 1), state: s.state, reason: s.reason, outputPath: s.path })),
  };
}

/** Plans `targets` (default: the pipeline's) against the store, with the run options a run would get. */
export async function makePlan(pipeline: LoadedPipeline, config: EffectiveConfig, targets: readonly StepSpec[] = pipeline.targets, options: Pick<RunOptions, 'rebuild' | 'acceptDrift'> = {}): Promise<CliPlan> {
  const runner = makeRunner(config);
  return fromRunnerPlan(await runner.plan(targets, { forceRunFailed: config.forceRunFailed, ...options }));
}
