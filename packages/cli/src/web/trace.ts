/**
 * The trace: every step of a run with its duration, CPU time, peak memory and state, as a
 * CSV or TSV file (what Nextflow's trace and Snakemake's benchmark files give HPC users).
 */
import { attemptFilesIn } from '@cairn/runner';
import type { StoreView } from '../store-view.js';
import type { RunFold } from './run-fold.js';
import { inside } from './step-detail.js';

/** Columns of the trace, in order. */
export const TRACE_COLUMNS = ['name', 'key', 'state', 'attempts', 'start', 'end', 'duration_ms', 'cpu_ms', 'peak_memory_bytes', 'memory_kind', 'exit_code'] as const;

/** One row of the trace. */
export type TraceRow = Readonly<Record<(typeof TRACE_COLUMNS)[number], string | number | null>>;

/** Rows of a run's trace (usage of each step's last attempt, read from the store). */
export async function traceRows(view: StoreView, run: RunFold): Promise<TraceRow[]> {
  const rows: TraceRow[] = [];
  // Usage files are small; read a few at a time so an object store is not flooded.
  const BATCH = 32;
  for (let i = 0; i < run.steps.length; i += BATCH) {
    const batch = run.steps.slice(i, i + BATCH);
    const usages = await Promise.all(batch.map((s) => (s.attempts > 0 && inside(view, s.path) ? view.readUsage(attemptFilesIn(s.path, s.attempts).scratch).catch(() => null) : null)));
    batch.forEach((s, k) => {
      const u = usages[k] ?? null;
      rows.push({
        name: s.name,
        key: run.key(s.path),
        state: s.state,
        attempts: s.attempts,
        start: s.start ?? null,
        end: s.end ?? null,
        duration_ms: s.start !== undefined && s.end !== undefined ? s.end - s.start : null,
        cpu_ms: u?.cpuMs ?? null,
        peak_memory_bytes: u?.peakMemoryBytes ?? null,
        memory_kind: u?.memoryKind ?? null,
        exit_code: u?.exitCode ?? null,
      });
    });
  }
  return rows;
}

/** One field: CSV quotes fields with a comma, quote or newline; TSV replaces tabs and newlines with spaces. */
function field(v: string | number | null, sep: ',' | '\t'): string {
  const s = v === null ? '' : String(v);
  if (sep === '\t') return s.replace(/[\t\r\n]/g, ' ');
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** The trace as CSV (`,`) or TSV (`\t`) text with a header line. */
export function formatTrace(rows: readonly TraceRow[], sep: ',' | '\t'): string {
  const lines = [TRACE_COLUMNS.join(sep)];
  for (const r of rows) lines.push(TRACE_COLUMNS.map((c) => field(r[c], sep)).join(sep));
  return `${lines.join('\n')}\n`;
}
