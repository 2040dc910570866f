/**
 * The runs of a store, from their journals (`{prefix}/.cairn/runs/*.jsonl`). Each journal is
 * folded once and then followed: a local journal is read from the byte where the last look
 * stopped; an object-store journal (rewritten whole while its run goes on) is fetched again
 * only when its modification time changed.
 */
import { open } from 'node:fs/promises';
import type { StatusToken } from '@cairn/runner';
import { journalDir } from '../report/journal.js';
import type { StoreView } from '../store-view.js';
import type { UiRunSummary } from './model.js';
import { RunFold } from './run-fold.js';

/** A journal being followed. */
interface Followed {
  fold: RunFold;
  file: string;
  /** Bytes of the journal folded (complete lines only). */
  bytes: number;
  lastModified: number;
}

const NEWLINE = 0x0a;

/** Runs made through the API write records but no journal: the store is scanned for them at most this often. */
export const RECORDS_SCAN_MS = 60_000;

/** The step state a stored status means, for a run rebuilt from its records. */
const STATE_OF: Readonly<Record<StatusToken, string>> = { SUCCESS: 'succeeded', FAILED: 'failed', DEP_FAILED: 'dep-failed', CANCELLED: 'cancelled', RUNNING: 'running' } as Record<StatusToken, string>;

/** Every run of one store, folded and kept up to date on demand. */
export class RunIndex {
  readonly #view: StoreView;
  readonly #runs = new Map<string, Followed>();
  /** Runs without a journal, rebuilt from step records. */
  #recordRuns = new Map<string, RunFold>();
  #scannedAt = 0;
  #scanning: Promise<void> | undefined;

  constructor(view: StoreView) {
    this.#view = view;
  }

  /** The runs, newest first. Throws when the store cannot be read (the server shows a banner). */
  async list(): Promise<UiRunSummary[]> {
    const files = await this.#view.listFiles(journalDir(this.#view.prefix));
    // A journal removed from the store (a cleaned prefix) drops its run.
    const present = new Set(files.map((f) => f.path));
    for (const [id, r] of this.#runs) if (!present.has(r.file)) this.#runs.delete(id);
    for (const f of files) {
      const m = /\/([^/]+)\.jsonl$/.exec(f.path);
      if (m === null) continue;
      const runId = m[1] as string;
      let r = this.#runs.get(runId);
      if (r === undefined) {
        r = { fold: new RunFold(runId, this.#view.prefix), file: f.path, bytes: 0, lastModified: -1 };
        this.#runs.set(runId, r);
      }
      if (f.lastModified !== r.lastModified) await this.#read(r, f.lastModified);
    }
    // The first look waits for the records; later ones refresh them in the background.
    if (this.#scanning === undefined && Date.now() - this.#scannedAt > RECORDS_SCAN_MS) {
      this.#scannedAt = Date.now();
      this.#scanning = this.#scanRecords()
        .catch(() => {})
        .finally(() => (this.#scanning = undefined));
      if (this.#recordRuns.size === 0) await this.#scanning;
    }
    const folds = [...[...this.#runs.values()].map((r) => r.fold), ...[...this.#recordRuns.values()].filter((f) => !this.#runs.has(f.runId))];
    return folds.map((f) => f.summary()).sort((a, b) => b.start - a.start || (a.runId < b.runId ? 1 : -1));
  }

  /** One run, read up to its journal's end; undefined when the store has no such run. */
  async run(runId: string): Promise<RunFold | undefined> {
    let r = this.#runs.get(runId);
    if (r === undefined) {
      await this.list();
      r = this.#runs.get(runId);
      if (r === undefined) return this.#recordRuns.get(runId);
    }
    if (this.#view.local) await this.#read(r, Date.now());
    else {
      const f = (await this.#view.listFiles(journalDir(this.#view.prefix))).find((x) => x.path === r.file);
      if (f !== undefined && f.lastModified !== r.lastModified) await this.#read(r, f.lastModified);
    }
    return r.fold;
  }

  /**
   * Runs that left records but no journal (made through the API): each rebuilt as the journal
   * `cairn run` would have written — the plan from the records' dependency paths, one attempt
   * span and the final state per step.
   */
  async #scanRecords(): Promise<void> {
    const byRun = new Map<string, { name: string; path: string; deps: readonly string[]; status: StatusToken; start: number; end: number; attempts: number }[]>();
    for (const s of await this.#view.scan()) {
      const r = s.record;
      if (r === null || typeof r.runId !== 'string' || this.#runs.has(r.runId) || s.status === null) continue;
      const list = byRun.get(r.runId) ?? [];
      list.push({ name: r.name, path: s.path, deps: r.depPaths ?? [], status: s.status, start: r.timings?.start ?? 0, end: r.timings?.end ?? 0, attempts: r.attempts?.length ?? 0 });
      byRun.set(r.runId, list);
    }
    const runs = new Map<string, RunFold>();
    for (const [runId, steps] of byRun) {
      const index = new Map(steps.map((s, i) => [s.path, i]));
      const start = Math.min(...steps.map((s) => s.start));
      const end = Math.max(...steps.map((s) => s.end));
      const lines: object[] = [
        { type: 'run-started', runId, prefix: this.#view.prefix, time: start },
        { type: 'plan', runId, time: start, host: undefined, user: undefined, targets: [], steps: steps.map((s) => ({ name: s.name, path: s.path, deps: s.deps.map((d) => index.get(d)).filter((d) => d !== undefined) })) },
      ];
      for (const s of steps) {
        if (s.attempts > 0) lines.push({ type: 'step', runId, step: s.name, path: s.path, state: 'running', attempt: s.attempts, time: s.start });
        lines.push({ type: 'step', runId, step: s.name, path: s.path, state: STATE_OF[s.status] ?? 'failed', attempt: s.attempts, time: s.end });
      }
      lines.push({ type: 'run-finished', runId, prefix: this.#view.prefix, time: end });
      const fold = new RunFold(runId, this.#view.prefix, 'records');
      fold.feed(lines.map((l) => JSON.stringify(l)).join('\n'));
      runs.set(runId, fold);
    }
    this.#recordRuns = runs;
  }

  /** Folds what was appended to a journal since the last read. */
  async #read(r: Followed, lastModified: number): Promise<void> {
    let bytes: Buffer;
    if (this.#view.local) {
      const fh = await open(r.file, 'r');
      try {
        const size = (await fh.stat()).size;
        if (size <= r.bytes) return;
        bytes = Buffer.alloc(size - r.bytes);
        await fh.read(bytes, 0, bytes.length, r.bytes);
      } finally {
        await fh.close();
      }
    } else {
      const text = await this.#view.readText(r.file);
      if (text === null) return;
      bytes = Buffer.from(text, 'utf8').subarray(r.bytes);
    }
    // Only complete lines: a line being written is read next time (a newline never splits a UTF-8 character).
    const end = bytes.lastIndexOf(NEWLINE);
    if (end >= 0) {
      r.fold.feed(bytes.subarray(0, end).toString('utf8'));
      r.bytes += end + 1;
    }
    r.lastModified = lastModified;
  }
}
