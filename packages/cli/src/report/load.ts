/**
 * Assembles a {@link ReportData} from a run journal (the newest, or a given run's) and the step
 * records, with what the executors measured of each attempt (`usage.json`: CPU time, peak
 * memory, exit code).
 */
import { hostname } from 'node:os';
import { attemptFilesIn, type ArtifactRecord } from '@cairn/runner';
import { cliError } from '../errors.js';
import type { StoredStep } from '../store-scan.js';
import type { StoreView } from '../store-view.js';
import { journalFile, newestJournal, type JournalEvent } from './journal.js';
import type { ReportAttempt, ReportData, ReportOutcome, ReportStep } from './model.js';

/** Log lines kept per failed step. */
const LOG_TAIL_LINES = 40;

/** Attempt `n`'s files inside a committed output directory (logs, and the executor's own files such as usage.json). */
const attemptFiles = (path: string, n: number) => {
  const f = attemptFilesIn(path, n);
  return { stdout: f.stdout, stderr: f.stderr, dir: f.scratch };
};

async function logTail(view: StoreView, path: string, attempt: number): Promise<string[]> {
  const files = attemptFiles(path, attempt);
  const lines: string[] = [];
  for (const f of [files.stdout, files.stderr]) {
    const text = await view.readText(f);
    if (text === null) continue;
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

/** Attempts with what their executor measured. */
async function withUsage(view: StoreView, path: string, attempts: readonly ReportAttempt[]): Promise<ReportAttempt[]> {
  return Promise.all(
    attempts.map(async (a) => {
      const u = await view.readUsage(attemptFiles(path, a.attempt).dir);
      if (u === null) return a;
      return { ...a, cpuMs: u.cpuMs, peakMemoryBytes: u.peakMemoryBytes, memoryKind: u.memoryKind, exitCode: u.exitCode, signal: u.signal, usage: u };
    }),
  );
}

const OUTCOMES: ReadonlySet<string> = new Set(['succeeded', 'failed', 'cached', 'skipped', 'dep-failed', 'cancelled']);

function parseJournal(text: string): JournalEvent[] {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as JournalEvent];
      } catch {
        return [];
      }
    });
}

/** What a run's step looks like once its events are folded. */
interface Folded {
  name: string;
  state: string;
  error?: string;
  note?: string;
  open?: { attempt: number; start: number };
  attempts: ReportAttempt[];
}

/** From a journal: every step the run touched, with attempts from its record when the record is this run's. */
async function fromJournal(view: StoreView, file: string, text: string, stored: ReadonlyMap<string, StoredStep>): Promise<ReportData> {
  const prefix = view.prefix;
  const events = parseJournal(text);
  if (events.length === 0) throw cliError('CAIRN_NO_STORE', `The run journal ${file} is empty.`, 'Run a pipeline with `cairn run` first.');
  const runId = events[0]!.runId;
  let start = events[0]!.time;
  let end = events[events.length - 1]!.time;
  const steps = new Map<string, Folded>();
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
    if (e.message !== undefined && (e.state === 'dep-failed' || e.state === 'cached' || e.state === 'skipped')) s.note = e.message;
  }
  const out: ReportStep[] = [];
  for (const [path, s] of steps) {
    const rec = stored.get(path)?.record ?? null;
    let attempts = s.attempts;
    if (s.open !== undefined) attempts = [...attempts, { attempt: s.open.attempt, start: s.open.start, end, state: 'running', executor: 'unknown', host }];
    // The record has executor, host and job id; use it when it belongs to this run.
    const mine = rec !== null && rec.runId === runId;
    if (mine && (rec.attempts?.length ?? 0) > 0) attempts = attemptsFromRecord(rec);
    attempts = await withUsage(view, path, attempts);
    const outcome = (OUTCOMES.has(s.state) ? s.state : s.open !== undefined ? 'running' : 'cancelled') as ReportOutcome;
    const last = attempts[attempts.length - 1];
    const builtBy = (outcome === 'cached' || outcome === 'skipped') && rec !== null && rec.runId !== runId ? { runId: rec.runId, end: rec.timings?.end ?? 0 } : undefined;
    out.push({
      name: s.name,
      key: view.rel(path),
      outcome,
      attempts,
      error: s.error ?? (mine ? rec?.error?.message.split('\n')[0] : undefined),
      errorStack: mine && outcome === 'failed' ? rec?.error?.stack : undefined,
      note: s.note,
      logTail: outcome === 'failed' && last ? await logTail(view, path, last.attempt) : undefined,
      builtBy,
    });
  }
  return { runId, prefix, start, end: Math.max(end, start), source: 'journal', steps: out };
}

/** Without a journal: the records of the newest run that wrote any (or of `runId`). */
async function fromRecords(view: StoreView, stored: readonly StoredStep[], runId?: string): Promise<ReportData> {
  const prefix = view.prefix;
  const withRecords = stored.filter((s) => s.record?.runId !== undefined && s.record.timings !== undefined);
  if (withRecords.length === 0) throw cliError('CAIRN_NO_STORE', `The store ${prefix} holds no run yet.`, 'Run a pipeline with `cairn run` first.');
  const newest = withRecords.reduce((a, b) => ((b.record!.timings.end ?? 0) > (a.record!.timings.end ?? 0) ? b : a));
  const id = runId ?? newest.record!.runId;
  const mine = withRecords.filter((s) => s.record!.runId === id);
  if (mine.length === 0) throw cliError('CAIRN_NO_STORE', `No record in ${prefix} was written by run ${id}.`, 'Run `cairn report` without --run for the newest run.');
  const steps: ReportStep[] = await Promise.all(
    mine.map(async (s) => {
      const r = s.record!;
      const attempts = await withUsage(view, s.path, attemptsFromRecord(r));
      const outcome: ReportOutcome = r.status === 'SUCCESS' ? 'succeeded' : r.status === 'DEP_FAILED' ? 'dep-failed' : r.status === 'CANCELLED' ? 'cancelled' : 'failed';
      const last = attempts[attempts.length - 1];
      return {
        name: r.name,
        key: s.rel,
        outcome,
        attempts,
        error: r.error?.message.split('\n')[0],
        errorStack: outcome === 'failed' ? r.error?.stack : undefined,
        note: outcome === 'dep-failed' ? r.error?.message : undefined,
        logTail: outcome === 'failed' && last ? await logTail(view, s.path, last.attempt) : undefined,
      };
    }),
  );
  const start = Math.min(...mine.map((s) => s.record!.timings.start));
  const end = Math.max(...mine.map((s) => s.record!.timings.end));
  return { runId: id, prefix, start, end, source: 'records', steps };
}

/**
 * A run under `prefix`: `runId`'s, else the newest; from its journal when `cairn run` wrote
 * one, else from records.
 */
export async function loadReport(view: StoreView, runId?: string): Promise<ReportData> {
  const stored = await view.scan();
  const journal = runId !== undefined ? journalFile(view.prefix, runId) : await newestJournal(view);
  const text = journal === undefined ? null : await view.readText(journal);
  if (journal !== undefined && text !== null) return fromJournal(view, journal, text, new Map(stored.map((s) => [s.path, s])));
  return fromRecords(view, stored, runId);
}

/** The runs that built a report's cached steps, newest first. */
export function builderRuns(data: ReportData): { runId: string; end: number; steps: number }[] {
  const runs = new Map<string, { runId: string; end: number; steps: number }>();
  for (const s of data.steps) {
    if (s.builtBy === undefined) continue;
    const r = runs.get(s.builtBy.runId) ?? { runId: s.builtBy.runId, end: 0, steps: 0 };
    r.end = Math.max(r.end, s.builtBy.end);
    r.steps++;
    runs.set(r.runId, r);
  }
  return [...runs.values()].sort((a, b) => b.end - a.end);
}
