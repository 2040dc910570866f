/**
 * `cairn report [--run ID] [--trace FILE]`: one self-contained HTML page for a run (the last one
 * by default). When steps were served from the store, the reports of the runs that built them are
 * written next to it and linked. `--trace` writes the run's per-attempt usage as TSV (or CSV, by
 * the file's extension; report/trace.ts), instead of the page unless `--out` is given too.
 */
import { writeFile } from 'node:fs/promises';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { loadConfig } from '../config.js';
import { out, type CliContext } from '../context.js';
import { renderReportHtml } from '../report/html.js';
import { builderRuns, loadReport } from '../report/load.js';
import type { ReportData } from '../report/model.js';
import { renderTrace, traceFormatOf } from '../report/trace.js';
import { openStore } from '../store-view.js';

/** Builder runs whose reports are written next to the main one, at most. */
const MAX_LINKED = 10;

/** Options of `cairn report`. */
export interface ReportCommandOptions {
  /** Output file. @default 'cairn-report.html' */
  readonly out?: string;
  /** Store prefix. */
  readonly prefix?: string;
  /** The run to report. @default the newest */
  readonly run?: string;
  /** Also (or, without `out`, only) write the run's trace here: TSV, or CSV for a `.csv` name. */
  readonly trace?: string;
}

/** `report.html` → `report.<runId>.html`. */
function siblingFile(path: string, runId: string): string {
  const ext = extname(path) || '.html';
  return join(dirname(path), `${basename(path, ext)}.${runId}${ext}`);
}

/** Writes the report of a run (and of the runs that built its cached steps). */
export async function reportCommand(ctx: CliContext, options: ReportCommandOptions): Promise<number> {
  const config = await loadConfig({ config: ctx.configFile, prefix: options.prefix }, ctx.env, ctx.cwd);
  const view = await openStore(config);
  const data = await loadReport(view, options.run);
  if (options.trace !== undefined) {
    const tracePath = resolve(ctx.cwd, options.trace);
    const format = traceFormatOf(tracePath);
    await writeFile(tracePath, renderTrace(data, format));
    const rows = data.steps.reduce((n, s) => n + s.attempts.length, 0);
    out(ctx, `wrote ${tracePath}: run ${data.runId}, ${rows} attempt(s) (${format.toUpperCase()}).`);
    if (options.out === undefined) return 0;
  }
  const path = resolve(ctx.cwd, options.out ?? 'cairn-report.html');
  const links: Record<string, string> = {};
  for (const b of builderRuns(data).slice(0, MAX_LINKED)) {
    let built: ReportData;
    try {
      built = await loadReport(view, b.runId);
    } catch {
      continue; // its records were overwritten by later runs and it left no journal
    }
    const file = siblingFile(path, b.runId);
    await writeFile(file, renderReportHtml(built));
    links[b.runId] = basename(file);
  }
  await writeFile(path, renderReportHtml({ ...data, links }));
  const failed = data.steps.filter((s) => s.outcome === 'failed').length;
  const linked = Object.keys(links).length;
  out(ctx, `wrote ${path}: run ${data.runId}, ${data.steps.length} step(s), ${failed} failed (from ${data.source})${linked > 0 ? `; and the report(s) of ${linked} run(s) that built its cached steps` : ''}.`);
  return 0;
}
