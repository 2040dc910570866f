/**
 * A step's page: its record as stored (config, identity, dependencies, provenance), its lease,
 * its attempts (the record's, with executor, host and job id; the journal's for an attempt still
 * running) with what each attempt's executor measured, and the log tail of its newest attempt.
 */
import { attemptFilesIn, isStale, maskSoFar, RECORD_FILE, type ArtifactRecord, type LiveLogMasks } from '@cairn/runner';
import type { StoreView } from '../store-view.js';
import type { UiAttempt, UiLog, UiStepDetail } from './model.js';
import type { RunFold } from './run-fold.js';

/** Log lines a step's page shows. */
export const LOG_TAIL_LINES = 200;

/** Attempt `n`'s directory and committed logs inside an output directory (the store's layout). */
const attemptDir = (path: string, n: number) => attemptFilesIn(path, n).scratch;
const committedLogs = (path: string, n: number): { stdout: string; stderr: string } => attemptFilesIn(path, n);

/** The detail of step `index` of `run`. */
export async function stepDetail(view: StoreView, run: RunFold, index: number): Promise<UiStepDetail | undefined> {
  const s = run.steps[index];
  if (s === undefined) return undefined;
  if (!inside(view, s.path)) return outsideDetail(run, index);
  const [stored] = await view.store.readStates([s.path], true);
  let record: ArtifactRecord | null = stored?.record ?? null;
  let problem = stored?.problem;
  if (record === null && stored?.status == null) {
    // A failed first attempt may leave a record without a status; a corrupt one is shown as such.
    const text = await view.readText(`${s.path}/${RECORD_FILE}`);
    if (text !== null) {
      try {
        record = JSON.parse(text) as ArtifactRecord;
      } catch (e) {
        problem = `The record ${s.path}/.artifact.json is not valid JSON (${(e as Error).message}).`;
      }
    }
  }
  const lease = await view.store.readLease(s.path);
  const mine = record !== null && record.runId === run.runId;
  const attempts: UiAttempt[] = [];
  const fromRecord = mine ? (record?.attempts ?? []) : [];
  for (const a of fromRecord) {
    attempts.push({ attempt: a.attempt, state: a.state, executor: a.executor, host: a.host, jobId: a.jobId, start: a.start, end: a.end, error: a.error?.message.split('\n')[0], usage: null });
  }
  // Attempts the record does not hold yet (running, or ended with no record written).
  for (let n = 1; n <= s.attempts; n++) {
    if (attempts.some((a) => a.attempt === n)) continue;
    const ended = s.attemptErrors.get(n);
    const running = ended === undefined && n === s.attempts && (s.state === 'running' || s.state === 'retrying');
    attempts.push({ attempt: n, state: running ? 'running' : (ended?.state ?? s.state), host: run.host, start: ended?.start ?? s.start, end: ended?.end, error: ended?.error, usage: null });
  }
  attempts.sort((a, b) => a.attempt - b.attempt);
  const withUsage = await Promise.all(attempts.map(async (a) => ({ ...a, usage: (await view.readUsage(attemptDir(s.path, a.attempt))) as Record<string, unknown> | null })));
  const named = (i: number) => ({ index: i, name: run.steps[i]?.name ?? `#${i}` });
  const dependents: number[] = [];
  run.steps.forEach((o, i) => {
    if (o.deps.includes(index)) dependents.push(i);
  });
  return {
    index,
    name: s.name,
    key: run.key(s.path),
    state: s.state,
    status: stored?.status ?? null,
    record,
    problem,
    lease: lease === null ? null : { holder: lease.holder ?? null, stale: isStale(lease, view.staleMs) },
    deps: s.deps.map(named),
    dependents: dependents.map(named),
    attempts: withUsage,
    note: s.note,
    error: s.error ?? (mine ? record?.error?.message.split('\n')[0] : undefined),
  };
}

/**
 * The last lines of an attempt's logs (the newest attempt when `attempt` is undefined): staged
 * while it runs, committed after. A running attempt of a step with secrets is masked with the
 * values `masks` resolves, or withheld (one notice line) when it cannot resolve them.
 */
export async function stepLog(view: StoreView, run: RunFold, masks: LiveLogMasks, index: number, attempt?: number): Promise<UiLog | undefined> {
  const s = run.steps[index];
  if (s === undefined) return undefined;
  const n = attempt ?? Math.max(1, s.attempts);
  if (!inside(view, s.path)) return { attempt: n, lines: [], live: false };
  const running = n === s.attempts && s.state === 'running';
  const committed = committedLogs(s.path, n);
  const candidates = [committed];
  // A running attempt writes where its `running` event said; paths outside the prefix are never read.
  if (running && s.logs !== undefined && inside(view, s.logs.stdout) && inside(view, s.logs.stderr)) candidates.unshift(s.logs);
  for (const files of candidates) {
    // Logs found where attempts are committed: it has ended, though the journal may not say so yet.
    const live = running && files !== committed;
    // Asked before the logs are read: the names file is written before the attempt's first log byte.
    const shown = live ? await masks.viewOf(files, n, (p) => view.readText(p)) : undefined;
    const texts = await Promise.all([view.readText(files.stdout), view.readText(files.stderr)]);
    if (texts.every((t) => t === null)) continue;
    if (shown?.show === 'withheld') return { attempt: n, lines: [shown.notice], live };
    const lines: string[] = [];
    for (const raw of texts) {
      if (raw === null) continue;
      // A running log may end in the middle of a value: `maskSoFar` leaves such a tail out.
      const t = shown?.show === 'masked' ? maskSoFar(raw, shown.values) : raw;
      lines.push(...t.split('\n').filter((l, i, all) => l !== '' || i < all.length - 1));
    }
    return { attempt: n, lines: lines.slice(-LOG_TAIL_LINES), live };
  }
  return { attempt: n, lines: [], live: running };
}

/** A step whose journalled path is not under the prefix (an edited journal): nothing of it is read. */
function outsideDetail(run: RunFold, index: number): UiStepDetail {
  const s = run.steps[index] as RunFold['steps'][number];
  return {
    index,
    name: s.name,
    key: s.path,
    state: s.state,
    status: null,
    record: null,
    problem: `The journal names ${s.path}, which is not under the store prefix ${run.prefix}: nothing there is read.`,
    lease: null,
    deps: [],
    dependents: [],
    attempts: [],
    error: s.error,
  };
}

/** True when `path` lies under the store's prefix (no `..` escapes). */
export function inside(view: StoreView, path: string): boolean {
  const rel = view.rel(path);
  return rel !== '.' && !rel.startsWith('..') && !rel.startsWith('/') && !/(^|\/)\.\.(\/|$)/.test(rel) && !/^[a-z][a-z0-9+.-]*:\/\//i.test(rel);
}
