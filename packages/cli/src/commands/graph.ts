/** `cairn graph`: the pipeline's DAG as Graphviz dot, Mermaid, or a self-contained HTML page. */
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { loadConfig } from '../config.js';
import { err, type CliContext } from '../context.js';
import { usageError } from '../errors.js';
import { renderDot } from '../graph/dot.js';
import { renderGraphHtml } from '../graph/html.js';
import { renderMermaid } from '../graph/mermaid.js';
import { buildGraphModel, type NodeFacts } from '../graph/model.js';
import { loadPipeline } from '../pipeline.js';
import { makePlan } from '../plan.js';
import { selection, type SelectionFlags } from '../selection.js';

/** Output formats of `cairn graph`. */
export type GraphFormat = 'dot' | 'mermaid' | 'html';

/** Options of `cairn graph`. */
export interface GraphCommandOptions {
  /** Output format. @default 'dot' */
  readonly format?: string;
  /** Write here instead of stdout. */
  readonly out?: string;
  /** Store prefix for the states. */
  readonly prefix?: string;
  /** `--no-plan`: skip the dry run (every state `unknown`). */
  readonly plan?: boolean;
}

/** Options of `cairn graph`: also the run options that name steps (the states are a plan's). */
export type GraphOptions = GraphCommandOptions & SelectionFlags;

/** Renders the graph; states come from a dry-run plan when a prefix is configured. */
export async function graphCommand(ctx: CliContext, file: string, selectors: readonly string[], options: GraphOptions): Promise<number> {
  const format = (options.format ?? 'dot') as GraphFormat;
  if (!['dot', 'mermaid', 'html'].includes(format)) {
    throw usageError(`Unknown graph format "${options.format}".`, 'Use --format dot, mermaid or html.');
  }
  const config = await loadConfig({ config: ctx.configFile, prefix: options.prefix }, ctx.env, ctx.cwd);
  const pipeline = await loadPipeline(file, ctx.cwd, config.layout);
  const chosen = selection(pipeline, selectors, options);
  let facts: Map<string, NodeFacts> = new Map();
  if (options.plan !== false && config.prefix !== undefined) {
    const plan = await makePlan(pipeline, config, chosen.targets, chosen.options);
    facts = new Map(plan.steps.map((s) => [s.nameWithHash, { state: s.state, reason: s.reason, output: s.outputPath }]));
  } else if (options.plan !== false && ctx.verbose) {
    err(ctx, 'cairn graph: no prefix set, so states are unknown (pass --prefix to colour by plan).');
  }
  const model = buildGraphModel(chosen.targets, facts);
  const text =
    format === 'dot' ? renderDot(model) : format === 'mermaid' ? renderMermaid(model) : renderGraphHtml(model, { title: `cairn graph — ${file}` });
  if (options.out !== undefined) {
    const path = resolve(ctx.cwd, options.out);
    await writeFile(path, text);
    err(ctx, `wrote ${path} (${model.nodes.length} steps, ${model.edges.length} edges)`);
  } else {
    ctx.stdout.write(text);
  }
  return 0;
}
