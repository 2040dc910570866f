/**
 * `cairn explain <step> <pipeline> --config`: the exact config each matching step will receive
 * (core's `materializedConfig`: dependencies and `OUT` as their paths under the prefix, runtime
 * arguments included), without running anything or reading the store.
 */
import { materializedConfig, type MaterializedConfig } from '@cairn/core';
import { type EffectiveConfig, requirePrefix } from '../config.js';
import { out, type CliContext } from '../context.js';
import { cliError } from '../errors.js';
import { loadPipeline, stepsMatching } from '../pipeline.js';

/** Prints the materialized configs of the steps of `file` that `selector` matches. */
export async function explainConfig(ctx: CliContext, config: EffectiveConfig, selector: string, file: string | undefined, json: boolean): Promise<number> {
  if (file === undefined) throw cliError('CAIRN_USAGE', '--config needs the pipeline: the config a step receives comes from its code, not the store.', `Run: cairn explain ${selector} pipeline.ts --config`);
  const prefix = requirePrefix(config);
  const pipeline = await loadPipeline(file, ctx.cwd, config.layout);
  const specs = stepsMatching(pipeline, selector);
  const configs: MaterializedConfig[] = specs.map((s) => materializedConfig(s, { prefix, layout: config.layout }));
  if (json) {
    out(ctx, JSON.stringify(configs.length === 1 ? configs[0] : configs, null, 2));
    return 0;
  }
  const c = ctx.colors;
  for (const m of configs) {
    out(ctx, `${c.bold(m.name)} ${c.dim(m.nameWithHash)}  ${c.dim(m.outputPath)}`);
    out(ctx, JSON.stringify(m.config, null, 2).split('\n').map((l) => `  ${l}`).join('\n'));
    if (m.runtime !== undefined) out(ctx, c.dim(`  runtime arguments (not part of the identity): ${Object.keys(m.runtime).join(', ')}`));
    out(ctx);
  }
  return 0;
}
