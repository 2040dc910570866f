/** `cairn report`: one self-contained HTML page for the last run. */
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { loadConfig, requirePrefix } from '../config.js';
import { out, type CliContext } from '../context.js';
import { renderReportHtml } from '../report/html.js';
import { loadReport } from '../report/load.js';

/** Options of `cairn report`. */
export interface ReportCommandOptions {
  /** Output file. @default 'cairn-report.html' */
  readonly out?: string;
  /** Store prefix. */
  readonly prefix?: string;
}

/** Writes the report of the last run. */
export async function reportCommand(ctx: CliContext, options: ReportCommandOptions): Promise<number> {
  const config = await loadConfig({ config: ctx.configFile, prefix: options.prefix }, ctx.env, ctx.cwd);
  const prefix = requirePrefix(config);
  const data = await loadReport(prefix);
  const path = resolve(ctx.cwd, options.out ?? 'cairn-report.html');
  await writeFile(path, renderReportHtml(data));
  const failed = data.steps.filter((s) => s.outcome === 'failed').length;
  out(ctx, `wrote ${path}: run ${data.runId}, ${data.steps.length} step(s), ${failed} failed (from ${data.source}).`);
  return 0;
}
