/**
 * Progress of a run, three ways: a live block on a TTY (counts by state, a bar, ETA, running
 * steps with their elapsed time; redrawn at most 10×/s), plain lines otherwise, or JSON lines.
 */
import type { RunnerEvent, StepEvent, StepState } from '@cairn/runner';
import type { Colors } from '../context.js';
import { eventToJson } from '../report/journal.js';
import { formatDuration } from '../table.js';

/** How progress is shown. */
export type ProgressMode = 'tty' | 'plain' | 'json';

/** Most redraws per second on a TTY. */
const REDRAW_MS = 100;
/** Running steps listed under the bar. */
const MAX_RUNNING_LINES = 8;

const FINAL: ReadonlySet<StepState> = new Set<StepState>(['succeeded', 'failed', 'dep-failed', 'cancelled', 'cached', 'skipped']);

interface StepView {
  state: StepState;
  since: number;
  attempt: number;
}

function errorLine(error: unknown): string {
  if (error instanceof Error) return error.message.split('\n')[0] as string;
  return String(error);
}

/** Receives runner events and renders them. Call `finish()` once the run ends. */
export class Progress {
  readonly #mode: ProgressMode;
  readonly #write: (s: string) => void;
  readonly #c: Colors;
  readonly #steps = new Map<string, StepView>();
  readonly #counts = new Map<StepState, number>();
  readonly #start = Date.now();
  #ranDone = 0;
  #ranMs = 0;
  #drawn = 0;
  #timer: NodeJS.Timeout | undefined;
  #dirty = false;
  #columns: () => number;

  constructor(options: { mode: ProgressMode; write: (s: string) => void; colors: Colors; columns?: () => number }) {
    this.#mode = options.mode;
    this.#write = options.write;
    this.#c = options.colors;
    this.#columns = options.columns ?? (() => 100);
    if (this.#mode === 'tty') {
      this.#timer = setInterval(() => this.#redraw(), REDRAW_MS);
      this.#timer.unref();
    }
  }

  /** Handles one runner event. */
  readonly onEvent = (event: RunnerEvent): void => {
    if (this.#mode === 'json') {
      this.#write(`${JSON.stringify(eventToJson(event))}\n`);
      return;
    }
    if (event.type !== 'step') return;
    const line = this.#describe(event);
    this.#track(event);
    if (line === undefined) {
      this.#dirty = true;
      return;
    }
    if (this.#mode === 'tty') {
      this.#clear();
      this.#write(`${line}\n`);
      this.#dirty = true;
    } else {
      this.#write(`${line}\n`);
    }
  };

  /** Writes a line that is not an event (a notice), keeping the live block intact. */
  note(line: string): void {
    if (this.#mode === 'json') return;
    if (this.#mode === 'tty') this.#clear();
    this.#write(`${line}\n`);
    this.#dirty = true;
  }

  /** Stops redrawing and removes the live block. */
  finish(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    if (this.#mode === 'tty') this.#clear();
  }

  /** Steps by state, as counted so far. */
  counts(): ReadonlyMap<StepState, number> {
    return this.#counts;
  }

  #track(e: StepEvent): void {
    const prev = this.#steps.get(e.path);
    if (prev !== undefined) this.#counts.set(prev.state, (this.#counts.get(prev.state) ?? 1) - 1);
    this.#counts.set(e.state, (this.#counts.get(e.state) ?? 0) + 1);
    if ((e.state === 'succeeded' || e.state === 'failed') && prev !== undefined && prev.state === 'running') {
      this.#ranDone++;
      this.#ranMs += e.time - prev.since;
    }
    this.#steps.set(e.path, { state: e.state, since: e.state === prev?.state ? prev.since : e.time, attempt: e.attempt ?? prev?.attempt ?? 0 });
  }

  #describe(e: StepEvent): string | undefined {
    const c = this.#c;
    const name = c.bold(e.step);
    const prev = this.#steps.get(e.path);
    const tail = e.message ? c.dim(` ${e.message}`) : '';
    const stamp = this.#mode === 'plain' ? `${new Date(e.time).toISOString().slice(11, 19)} ` : '';
    switch (e.state) {
      case 'pending':
        return undefined;
      case 'running':
        return this.#mode === 'tty' ? undefined : `${stamp}${c.blue('running ')} ${name}${(e.attempt ?? 1) > 1 ? ` (attempt ${e.attempt})` : ''}`;
      case 'waiting-lease':
        return `${stamp}${c.magenta('waiting ')} ${name}${tail}`;
      case 'retrying':
        return `${stamp}${c.yellow('retrying')} ${name} after attempt ${e.attempt ?? '?'}: ${errorLine(e.error)}`;
      case 'succeeded':
        return `${stamp}${c.green('done    ')} ${name} ${c.dim(formatDuration(e.time - (prev?.since ?? e.time)))}${tail}`;
      case 'cached':
        return `${stamp}${c.dim('cached  ')} ${name}${tail}`;
      case 'skipped':
        return `${stamp}${c.dim('skipped ')} ${name}${tail}`;
      case 'failed':
        return `${stamp}${c.red('FAILED  ')} ${name}: ${errorLine(e.error)}`;
      case 'dep-failed':
        return `${stamp}${c.red('dep-fail')} ${name}${tail}`;
      case 'cancelled':
        return `${stamp}${c.yellow('cancel  ')} ${name}`;
      default:
        return `${stamp}${e.state} ${name}`;
    }
  }

  #clear(): void {
    if (this.#drawn > 0) {
      this.#write(`\u001b[${this.#drawn}A\u001b[0J`);
      this.#drawn = 0;
    }
  }

  #redraw(): void {
    if (!this.#dirty && ![...this.#steps.values()].some((s) => s.state === 'running')) return;
    this.#dirty = false;
    const c = this.#c;
    const now = Date.now();
    const total = this.#steps.size;
    let done = 0;
    for (const s of this.#steps.values()) if (FINAL.has(s.state)) done++;
    const width = Math.max(10, Math.min(30, this.#columns() - 70));
    const filled = total === 0 ? 0 : Math.round((done / total) * width);
    const bar = c.green('█'.repeat(filled)) + c.dim('░'.repeat(width - filled));
    const running = [...this.#steps.entries()].filter(([, s]) => s.state === 'running');
    const left = total - done;
    const concurrency = Math.max(1, running.length);
    const eta = this.#ranDone > 0 && left > 0 ? ` eta ${formatDuration(((this.#ranMs / this.#ranDone) * left) / concurrency)}` : '';
    const parts: string[] = [];
    const order: StepState[] = ['cached', 'succeeded', 'running', 'pending', 'waiting-lease', 'retrying', 'failed', 'dep-failed', 'cancelled', 'skipped'];
    for (const st of order) {
      const n = this.#counts.get(st) ?? 0;
      if (n > 0) parts.push(`${n} ${st}`);
    }
    const lines = [`${bar} ${done}/${total} ${c.dim(formatDuration(now - this.#start))}${eta}  ${parts.join(c.dim(' · '))}`];
    for (const [path, s] of running.slice(0, MAX_RUNNING_LINES)) {
      const name = path.split('/').slice(-2).join('/');
      lines.push(`  ${c.blue('▶')} ${name} ${c.dim(formatDuration(now - s.since))}${s.attempt > 1 ? c.yellow(` attempt ${s.attempt}`) : ''}`);
    }
    if (running.length > MAX_RUNNING_LINES) lines.push(c.dim(`  …and ${running.length - MAX_RUNNING_LINES} more running`));
    this.#clear();
    const cols = this.#columns();
    this.#write(`${lines.map((l) => (l.length > cols * 2 ? l.slice(0, cols * 2) : l)).join('\n')}\n`);
    this.#drawn = lines.length;
  }
}
