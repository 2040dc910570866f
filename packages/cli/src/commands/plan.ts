/** `cairn plan`: what a run would do, step by step (a dry run: reads the store, writes nothing). */
import { loadConfig } from '../config.js';
import { out, type CliContext } from '../context.js';
import { paint, PLAN_STATES, type StepState } from '../states.js';
import { loadPipeline, selectSteps } from '../pipeline.js';
import { makePlan, type CliPlan } from '../plan.js';
import { formatTable } from '../table.js';

/** Options of `cairn plan` (and `cairn run --dry-run`). */
export interface PlanCommandOptions {
  /** Store prefix. */
  readonly prefix?: string;
  /** Print JSON. */
  readonly json?: boolean;
  /** Rerun earlier failures. */
  readonly forceRunFailed?: boolean;
  /** `--executor`. */
  readonly executor?: string;
  /** `--max-concurrent`. */
  readonly maxConcurrent?: number;
}

/** Prints a plan as a table (or JSON). */
export function printPlan(ctx: CliContext, plan: CliPlan, json: boolean | undefined): void {
  if (json) {
    out(ctx, JSON.stringify(plan, null, 2));
    return;
  }
  const c = ctx.colors;
  out(
    ctx,
    formatTable(
      ['step', 'hash', 'state', 'reason', 'output'],
      plan.steps.map((s) => [s.name, s.hash.slice(0, 8), paint(c, PLAN_STATES[s.state]), s.reason.length > 80 ? `${s.reason.slice(0, 79)}…` : s.reason, s.outputPath]),
    ),
  );
  const counts = Object.entries(plan.counts)
    .filter(([, n]) => (n ?? 0) > 0)
    .map(([k, n]) => `${n} ${PLAN_STATES[k as StepState]?.label ?? k}`);
  out(ctx, c.dim(`${plan.steps.length} step(s): ${counts.join(', ')} (prefix ${plan.prefix})`));
}

/** Plans a pipeline (optionally only some targets) and prints it. */
export async function planCommand(ctx: CliContext, file: string, options: PlanCommandOptions, selectors: readonly string[] = []): Promise<number> {
  const config = await loadConfig({ config: ctx.configFile, ...options }, ctx.env, ctx.cwd);
  const pipeline = await loadPipeline(file, ctx.cwd);
  const targets = selectors.length > 0 ? selectSteps(pipeline.specs, selectors) : pipeline.targets;
  const plan = await makePlan(pipeline, config, targets);
  printPlan(ctx, plan, options.json);
  return 0;
}
