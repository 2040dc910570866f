/**
 * Folds a run journal (src/report/journal.ts) into the run's steps and states, line by line,
 * so a live run is followed by reading only what was appended since the last look.
 */
import { isFinalState } from '@cairn/runner';
import type { JournalEntry, JournalEvent } from '../report/journal.js';
import type { UiRun, UiRunSummary, UiStateChange, UiStep } from './model.js';

/** One step while folding. */
interface FoldStep {
  name: string;
  path: string;
  deps: number[];
  state: string;
  attempts: number;
  start?: number;
  end?: number;
  note?: string;
  error?: string;
  /** Log files of the running attempt (from its `running` event). */
  logs?: { stdout: string; stderr: string };
  /** Errors of ended attempts, by attempt. */
  attemptErrors: Map<number, { state: string; start: number; end: number; error?: string }>;
}

/** A run journal, folded. */
export class RunFold {
  readonly runId: string;
  readonly prefix: string;
  start = 0;
  end = 0;
  finished = false;
  host: string | undefined;
  user: string | undefined;
  targets: string[] = [];
  corruptLines = 0;
  readonly steps: FoldStep[] = [];
  readonly #byPath = new Map<string, number>();
  /** Changes so far; each step remembers the change that last touched it (every viewer keeps its own `seq`). */
  seq = 0;
  readonly #stepSeq: number[] = [];

  /** Where the run was read from: its journal, or its step records (a run made through the API). */
  readonly source: 'journal' | 'records';

  constructor(runId: string, prefix: string, source: 'journal' | 'records' = 'journal') {
    this.runId = runId;
    this.prefix = prefix.replace(/\/+$/, '');
    this.source = source;
  }

  /** Folds complete journal lines (the reader keeps its own offset: see journal-reader.ts). */
  feed(lines: string): void {
    for (const line of lines.split('\n')) {
      if (line.trim() === '') continue;
      let entry: JournalEntry;
      try {
        entry = JSON.parse(line) as JournalEntry;
      } catch {
        this.corruptLines++;
        continue;
      }
      if (typeof entry !== 'object' || entry === null || typeof (entry as { type?: unknown }).type !== 'string') {
        this.corruptLines++;
        continue;
      }
      this.#add(entry);
    }
  }

  #step(path: string, name: string): number {
    let i = this.#byPath.get(path);
    if (i === undefined) {
      i = this.steps.length;
      this.steps.push({ name, path, deps: [], state: 'pending', attempts: 0, attemptErrors: new Map() });
      this.#byPath.set(path, i);
      this.#stepSeq.push(++this.seq);
    }
    return i;
  }

  #add(e: JournalEntry): void {
    if (typeof e.time === 'number') {
      if (this.start === 0 || e.type === 'run-started') this.start = e.time;
      this.end = Math.max(this.end, e.time);
    }
    if (e.type === 'run-finished') this.finished = true;
    if (e.type === 'plan') {
      this.host = e.host;
      this.user = e.user;
      this.targets = [...e.targets];
      const idx = e.steps.map((s) => this.#step(s.path, s.name));
      e.steps.forEach((s, k) => {
        const st = this.steps[idx[k] as number] as FoldStep;
        if (st.deps.length === 0) st.deps = s.deps.map((d) => idx[d] as number).filter((d) => d !== undefined);
      });
      return;
    }
    if (e.type !== 'step') return;
    this.#stepEvent(e);
  }

  #stepEvent(e: Extract<JournalEvent, { type: 'step' }>): void {
    const i = this.#step(e.path, e.step);
    const s = this.steps[i] as FoldStep;
    if (e.state === 'running') {
      s.attempts = Math.max(s.attempts, e.attempt ?? s.attempts + 1);
      s.start ??= e.time;
      if (e.logs !== undefined) s.logs = { stdout: e.logs.stdout, stderr: e.logs.stderr };
    } else if (s.state === 'running' || s.state === 'retrying') {
      const n = e.attempt ?? s.attempts;
      s.attemptErrors.set(n, { state: e.state === 'retrying' ? (e.error?.code === 'CAIRN_TIMEOUT' ? 'timeout' : 'failed') : e.state, start: s.start ?? e.time, end: e.time, ...(e.error !== undefined ? { error: e.error.message.split('\n')[0] } : {}) });
    }
    if (isFinalState(e.state)) s.end = e.time;
    s.state = e.state;
    if (e.error !== undefined) s.error = e.error.message.split('\n')[0];
    if (e.message !== undefined) s.note = e.message;
    this.#stepSeq[i] = ++this.seq;
  }

  /** Index of the step with output path `path` (absolute). */
  indexOf(path: string): number | undefined {
    return this.#byPath.get(path);
  }

  /** Output path relative to the prefix. */
  key(path: string): string {
    return path.startsWith(`${this.prefix}/`) ? path.slice(this.prefix.length + 1) : path;
  }

  /** Steps by state. */
  counts(): Record<string, number> {
    const c: Record<string, number> = {};
    for (const s of this.steps) c[s.state] = (c[s.state] ?? 0) + 1;
    return c;
  }

  summary(): UiRunSummary {
    return { runId: this.runId, source: this.source, start: this.start, end: this.end, running: !this.finished, host: this.host, user: this.user, targets: this.targets, steps: this.steps.length, counts: this.counts(), corruptLines: this.corruptLines };
  }

  /** The whole run, for the DAG page. */
  toJson(): UiRun {
    const stepList: UiStep[] = this.steps.map((s) => ({ name: s.name, key: this.key(s.path), deps: s.deps, state: s.state, start: s.start, end: s.end, attempts: s.attempts }));
    return { ...this.summary(), prefix: this.prefix, seq: this.seq, stepList };
  }

  /**
   * Steps changed after change `seq` (a viewer's last seen). A viewer that knows `known` steps
   * gets only the state of those; name, key and dependencies come only for steps new to it.
   */
  changesSince(seq: number, known = 0): UiStateChange[] {
    const out: UiStateChange[] = [];
    if (seq >= this.seq) return out;
    this.#stepSeq.forEach((v, i) => {
      if (v <= seq) return;
      const s = this.steps[i] as FoldStep;
      out.push(i < known ? [i, s.state, s.attempts, s.start ?? null, s.end ?? null] : [i, s.state, s.attempts, s.start ?? null, s.end ?? null, s.name, this.key(s.path), s.deps]);
    });
    return out;
  }
}

export type { FoldStep };
