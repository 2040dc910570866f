/** `cairn plan`: what a run would do, step by step (a dry run: reads the store, writes nothing). */
import { loadConfig } from '../config.js';
import { out, type CliContext } from '../context.js';
import { paint, PLAN_STATES, type StepState } from '../states.js';
import { loadPipeline } from '../pipeline.js';
import { selection, type SelectionFlags } from '../selection.js';
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

/** Options of `cairn plan`: also the run options that name steps. */
export type PlanOptions = PlanCommandOptions & SelectionFlags;

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
export async function planCommand(ctx: CliContext, file: string, selectors: readonly string[], options: PlanOptions): Promise<number> {
  const { rebuild, rebuildAll, acceptDrift, ...flags } = options;
  const config = await loadConfig({ config: ctx.configFile, ...flags }, ctx.env, ctx.cwd);
  const pipeline = await loadPipeline(file, ctx.cwd, config.layout);
  const chosen = selection(pipeline, selectors, { rebuild, rebuildAll, acceptDrift });
  const plan = await makePlan(pipeline, config, chosen.targets, chosen.options);
  printPlan(ctx, plan, options.json);
  return 0;
}
