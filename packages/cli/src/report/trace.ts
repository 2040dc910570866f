/**
 * A run's trace: one row per attempt with what it used, as TSV or CSV (the columns follow
 * Nextflow's trace file, in raw units: ms and bytes), for sizing `--mem` and `--gres` from a
 * spreadsheet or pandas. A cell the executor did not measure is `-`.
 */
import type { AttemptUsage } from '@cairn/runner';
import type { ReportAttempt, ReportData, ReportStep } from './model.js';

/** Trace file formats. */
export type TraceFormat =
  /** Tab-separated. */
  | 'tsv'
  /** Comma-separated (RFC 4180 quoting). */
  | 'csv';

/** The columns, in order. */
export const TRACE_COLUMNS = [
  'task_id',
  'name',
  'key',
  'attempt',
  'status',
  'outcome',
  'exit',
  'executor',
  'host',
  'native_id',
  'start',
  'realtime_ms',
  'cpu_ms',
  '%cpu',
  'cpu_scope',
  'peak_rss_bytes',
  'memory',
  'children_peak_rss_bytes',
  'gpu_peak_mem_bytes',
  '%gpu',
  'sample_interval_ms',
  'note',
] as const;

const dash = (v: number | string | null | undefined) => (v === undefined || v === null || v === '' ? '-' : String(v));

function memoryLabel(u: AttemptUsage | undefined): string | undefined {
  if (u?.peakMemoryBytes === undefined) return undefined;
  return u.memoryKind === 'heap' ? 'heap' : `rss:${u.memoryScope ?? 'process'}`;
}

function row(id: number, s: ReportStep, a: ReportAttempt): string[] {
  const u = a.usage;
  const realtime = u?.wallMs ?? a.end - a.start;
  const cpu = u?.cpuMs ?? a.cpuMs;
  const exit = a.signal ? a.signal : a.exitCode;
  return [
    String(id),
    s.name,
    s.key,
    String(a.attempt),
    a.state,
    s.outcome,
    dash(exit),
    a.executor,
    a.host,
    dash(a.jobId),
    new Date(a.start).toISOString(),
    dash(realtime),
    dash(cpu === undefined ? undefined : Math.round(cpu)),
    dash(cpu === undefined || realtime <= 0 ? undefined : ((cpu / realtime) * 100).toFixed(1)),
    dash(u?.cpuScope),
    dash(u?.peakMemoryBytes ?? a.peakMemoryBytes),
    dash(memoryLabel(u)),
    dash(u?.childPeakRssBytes),
    dash(u?.gpuPeakMemoryBytes),
    dash(u?.gpuUtilizationPercent),
    dash(u?.sampleIntervalMs),
    dash(u?.note),
  ];
}

function cell(v: string, format: TraceFormat): string {
  if (format === 'tsv') return v.replace(/[\t\r\n]/g, ' ');
  return /[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

/** The trace of a run's attempts (steps that did not run, cached ones, have no row), header first. */
export function renderTrace(data: ReportData, format: TraceFormat): string {
  const sep = format === 'tsv' ? '\t' : ',';
  const lines = [TRACE_COLUMNS.join(sep)];
  let id = 0;
  const attempts = data.steps.flatMap((s) => s.attempts.map((a) => ({ s, a }))).sort((x, y) => x.a.start - y.a.start);
  for (const { s, a } of attempts) lines.push(row(++id, s, a).map((v) => cell(v, format)).join(sep));
  return `${lines.join('\n')}\n`;
}

/** The format a trace file's name asks for: `.csv` is CSV, anything else TSV. */
export function traceFormatOf(file: string): TraceFormat {
  return file.toLowerCase().endsWith('.csv') ? 'csv' : 'tsv';
}
