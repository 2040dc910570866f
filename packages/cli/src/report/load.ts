/** Assembles a {@link ReportData} from the newest run journal and the step records. */
import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { relative } from 'node:path';
import { localLayout, type ArtifactRecord } from '@cairn/runner';
import { usageError } from '../errors.js';
import { scanStore, type StoredStep } from '../store-scan.js';
import { newestJournal, type JournalEvent } from './journal.js';
import type { ReportAttempt, ReportData, ReportOutcome, ReportStep } from './model.js';

/** Log lines kept per failed step. */
const LOG_TAIL_LINES = 40;

function logTail(path: string, attempt: number): string[] {
  const files = localLayout.logsDir(path);
  const lines: string[] = [];
  for (const f of [`${files}/attempt-${attempt}.stdout`, `${files}/attempt-${attempt}.stderr`]) {
    if (!existsSync(f)) continue;
    const text = readFileSync(f, 'utf8');
    lines.push(...text.split('\n').filter((l, i, all) => l !== '' || i < all.length - 1));
  }
  return lines.slice(-LOG_TAIL_LINES);
}

function attemptsFromRecord(r: ArtifactRecord): ReportAttempt[] {
  return (r.attempts ?? []).map((a) => ({
    attempt: a.attempt,
    start: a.start,
    end: a.end,
    state: a.state,
    executor: a.executor,
    host: a.host,
    jobId: a.jobId,
    error: a.error?.message.split('\n')[0],
  }));
}

const OUTCOMES: ReadonlySet<string> = new Set(['succeeded', 'failed', 'cached', 'skipped', 'dep-failed', 'cancelled']);

/** From a journal: every step the run touched, with attempts from its record when the record is this run's. */
function fromJournal(prefix: string, file: string, stored: ReadonlyMap<string, StoredStep>): ReportData {
  const events = readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as JournalEvent];
      } catch {
        return [];
      }
    });
  if (events.length === 0) throw usageError(`The run journal ${file} is empty.`, 'Run a pipeline with `cairn run` first.');
  const runId = events[0]!.runId;
  let start = events[0]!.time;
  let end = events[events.length - 1]!.time;
  const steps = new Map<string, { name: string; state: string; error?: string; open?: { attempt: number; start: number }; attempts: ReportAttempt[] }>();
  const host = hostname();
  for (const e of events) {
    if (e.type === 'run-started') start = e.time;
    if (e.type === 'run-finished') end = e.time;
    if (e.type !== 'step') continue;
    let s = steps.get(e.path);
    if (s === undefined) {
      s = { name: e.step, state: e.state, attempts: [] };
      steps.set(e.path, s);
    }
    if (s.open !== undefined && e.state !== 'running') {
      const state = e.state === 'retrying' ? (e.error?.code === 'CAIRN_TIMEOUT' ? 'timeout' : 'failed') : e.state === 'succeeded' ? 'succeeded' : e.state === 'cancelled' ? 'cancelled' : 'failed';
      s.attempts.push({ attempt: s.open.attempt, start: s.open.start, end: e.time, state, executor: 'unknown', host, error: e.error?.message.split('\n')[0] });
      s.open = undefined;
    }
    if (e.state === 'running') s.open = { attempt: e.attempt ?? s.attempts.length + 1, start: e.time };
    s.state = e.state;
    if (e.error !== undefined) s.error = e.error.message.split('\n')[0];
  }
  const out: ReportStep[] = [];
  for (const [path, s] of steps) {
    const rec = stored.get(path)?.record;
    let attempts = s.attempts;
    if (s.open !== undefined) attempts = [...attempts, { attempt: s.open.attempt, start: s.open.start, end, state: 'running', executor: 'unknown', host }];
    // The record has executor, host and job id; use it when it belongs to this run.
    if (rec && rec.runId === runId && (rec.attempts?.length ?? 0) > 0) attempts = attemptsFromRecord(rec);
    const outcome = (OUTCOMES.has(s.state) ? s.state : s.open !== undefined ? 'running' : 'cancelled') as ReportOutcome;
    const last = attempts[attempts.length - 1];
    out.push({
      name: s.name,
      key: relative(prefix, path) || path,
      outcome,
      attempts,
      error: s.error ?? rec?.error?.message.split('\n')[0],
      logTail: outcome === 'failed' && last ? logTail(path, last.attempt) : undefined,
    });
  }
  return { runId, prefix, start, end: Math.max(end, start), source: 'journal', steps: out };
}

/** Without a journal: the records of the newest run that wrote any. */
function fromRecords(prefix: string, stored: readonly StoredStep[]): ReportData {
  const withRecords = stored.filter((s) => s.record?.runId !== undefined && s.record.timings !== undefined);
  if (withRecords.length === 0) throw usageError(`The store ${prefix} holds no run yet.`, 'Run a pipeline with `cairn run` first.');
  const newest = withRecords.reduce((a, b) => ((b.record!.timings.end ?? 0) > (a.record!.timings.end ?? 0) ? b : a));
  const runId = newest.record!.runId;
  const mine = withRecords.filter((s) => s.record!.runId === runId);
  const steps: ReportStep[] = mine.map((s) => {
    const r = s.record!;
    const attempts = attemptsFromRecord(r);
    const outcome: ReportOutcome = r.status === 'SUCCESS' ? 'succeeded' : r.status === 'DEP_FAILED' ? 'dep-failed' : r.status === 'CANCELLED' ? 'cancelled' : 'failed';
    const last = attempts[attempts.length - 1];
    return { name: r.name, key: s.rel, outcome, attempts, error: r.error?.message.split('\n')[0], logTail: outcome === 'failed' && last ? logTail(s.path, last.attempt) : undefined };
  });
  const start = Math.min(...mine.map((s) => s.record!.timings.start));
  const end = Math.max(...mine.map((s) => s.record!.timings.end));
  return { runId, prefix, start, end, source: 'records', steps };
}

/** The last run under `prefix`: from its journal when `cairn run` wrote one, else from records. */
export async function loadReport(prefix: string): Promise<ReportData> {
  const stored = await scanStore(prefix);
  const journal = newestJournal(prefix);
  if (journal !== undefined) return fromJournal(prefix, journal, new Map(stored.map((s) => [s.path, s])));
  return fromRecords(prefix, stored);
}
