/**
 * Progress of a run, three ways: a live block on a TTY (counts by state, a bar, ETA, running
 * steps with their elapsed time; redrawn at most 10×/s), plain lines otherwise, or JSON lines.
 *
 * What the running steps write (followed from their log files) is printed as it arrives:
 * above the live block on a TTY, as Nx's and Vitest's views do (the block is erased, the lines
 * written, the block drawn again below them), so output never lands inside the block.
 */
import { eventToJson, type RunnerEvent, type StepEvent, type StepState } from '@cairn/runner';
import type { Colors } from '../context.js';
import { paint, RUN_STATES } from '../states.js';
import { formatDuration } from '../table.js';
import { StepOutput, type OutputLine } from './step-output.js';

/** How progress is shown. */
export type ProgressMode = 'tty' | 'plain' | 'json';

/** Most redraws per second on a TTY. */
const REDRAW_MS = 100;
/** How often running steps' log files are read without a TTY. */
const PLAIN_POLL_MS = 250;
/** Running steps listed under the bar. */
const MAX_RUNNING_LINES = 8;

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*m/g;

interface StepView {
  state: StepState;
  since: number;
  attempt: number;
}

function errorLine(error: unknown): string {
  if (error instanceof Error) return error.message.split('\n')[0] as string;
  return String(error);
}

/** Options of {@link Progress}. */
export interface ProgressOptions {
  readonly mode: ProgressMode;
  readonly write: (s: string) => void;
  readonly colors: Colors;
  /** Terminal width. @default 100 */
  readonly columns?: () => number;
  /** Show steps' output (followed from the log files each `running` event names). @default false */
  readonly showOutput?: boolean;
  /** The short hash shown after a step's name (by output path), so a build can be picked later (`cairn logs train-1a2b3c4d`). */
  readonly hashOf?: (path: string) => string | undefined;
  /** Masks secret values in the steps' output lines it shows (`StepRunner.maskSecrets`). @default none */
  readonly mask?: (line: string) => string;
}

/** Receives runner events and renders them. Call `finish()` once the run ends. */
export class Progress {
  readonly #mode: ProgressMode;
  readonly #write: (s: string) => void;
  readonly #c: Colors;
  readonly #steps = new Map<string, StepView>();
  readonly #counts = new Map<StepState, number>();
  readonly #start = Date.now();
  readonly #showOutput: boolean;
  readonly #output = new StepOutput();
  readonly #mask: (line: string) => string;
  #ranDone = 0;
  #ranMs = 0;
  #drawn = 0;
  #timer: NodeJS.Timeout | undefined;
  #dirty = false;
  #columns: () => number;
  readonly #hashOf: (path: string) => string | undefined;

  constructor(options: ProgressOptions) {
    this.#mode = options.mode;
    this.#write = options.write;
    this.#c = options.colors;
    this.#columns = options.columns ?? (() => 100);
    this.#showOutput = options.showOutput ?? false;
    this.#hashOf = options.hashOf ?? (() => undefined);
    this.#mask = options.mask ?? ((line) => line);
    if (this.#mode === 'tty') {
      this.#timer = setInterval(() => this.#tick(), REDRAW_MS);
      this.#timer.unref();
    } else if (this.#showOutput) {
      this.#timer = setInterval(() => this.#lines(this.#output.poll()), PLAIN_POLL_MS);
      this.#timer.unref();
    }
  }

  /** Handles one runner event. */
  readonly onEvent = (event: RunnerEvent): void => {
    if (event.type === 'step') this.#followOutput(event);
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
    if (this.#mode === 'tty') this.#clear();
    this.#write(`${line}\n`);
    this.#dirty = true;
  };

  /** Writes a line that is not an event (a notice), keeping the live block intact. */
  note(line: string): void {
    if (this.#mode === 'json') return;
    if (this.#mode === 'tty') this.#clear();
    this.#write(`${line}\n`);
    this.#dirty = true;
  }

  /** Stops redrawing and removes the live block (printing what running steps wrote last). */
  finish(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#lines(this.#output.poll());
    if (this.#mode === 'tty') this.#clear();
  }

  /** Steps by state, as counted so far. */
  counts(): ReadonlyMap<StepState, number> {
    return this.#counts;
  }

  /** Follows a running attempt's log files; prints the rest of them when it ends. */
  #followOutput(e: StepEvent): void {
    if (!this.#showOutput) return;
    if (e.state === 'running') {
      if (this.#output.has(e.path)) this.#lines(this.#output.drain(e.path));
      if (e.logs !== undefined) this.#output.follow(e.path, e.step, e.logs);
    } else if (this.#output.has(e.path)) {
      this.#lines(this.#output.drain(e.path));
    }
  }

  /** Prints lines steps wrote: above the block on a TTY. */
  #lines(raw: readonly OutputLine[]): void {
    if (raw.length === 0) return;
    // Followed live, before the attempt's logs are masked: a step that echoes a secret shows ***.
    const lines = raw.map((l) => ({ ...l, line: this.#mask(l.line) }));
    if (this.#mode === 'json') {
      const time = Date.now();
      this.#write(lines.map((l) => `${JSON.stringify({ type: 'output', step: l.step, path: l.key, stream: l.stream, line: l.line, time })}\n`).join(''));
      return;
    }
    const c = this.#c;
    if (this.#mode === 'tty') this.#clear();
    const stamp = this.#mode === 'plain' ? `${new Date().toISOString().slice(11, 19)} ` : '';
    this.#write(lines.map((l) => `${stamp}${c.dim(`${l.step} │`)} ${l.stream === 'stderr' ? c.yellow(l.line) : l.line}\n`).join(''));
    this.#dirty = true;
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
    const hash = this.#hashOf(e.path);
    const name = `${c.bold(e.step)}${hash !== undefined ? c.dim(` ${hash}`) : ''}`;
    const prev = this.#steps.get(e.path);
    const tail = e.message ? c.dim(` ${e.message}`) : '';
    const stamp = this.#mode === 'plain' ? `${new Date(e.time).toISOString().slice(11, 19)} ` : '';
    const word = (text: string) => paint(c, RUN_STATES[e.state], text.padEnd(8));
    switch (e.state) {
      case 'pending':
        return undefined;
      case 'running':
        return this.#mode === 'tty' ? undefined : `${stamp}${word('running')} ${name}${(e.attempt ?? 1) > 1 ? ` (attempt ${e.attempt})` : ''}`;
      case 'waiting-lease':
        return `${stamp}${word('waiting')} ${name}${tail}`;
      case 'retrying':
        return `${stamp}${word('retrying')} ${name} after attempt ${e.attempt ?? '?'}: ${errorLine(e.error)}`;
      case 'succeeded':
        return `${stamp}${word('done')} ${name} ${c.dim(formatDuration(e.time - (prev?.since ?? e.time)))}${tail}`;
      case 'cached':
        return `${stamp}${word('cached')} ${name}${tail}`;
      case 'skipped':
        return `${stamp}${word('skipped')} ${name}${tail}`;
      case 'failed':
        return `${stamp}${word('FAILED')} ${name}: ${errorLine(e.error)}`;
      case 'dep-failed':
        return `${stamp}${word('dep-fail')} ${name}${tail}`;
      case 'cancelled':
        return `${stamp}${word('cancel')} ${name}`;
      default:
        return `${stamp}${e.state} ${name}`;
    }
  }

  #clear(): void {
    if (this.#drawn > 0) {
      // From column 0: the terminal's echo of Ctrl-C (`^C`) moved the cursor right, and erasing
      // from there left the first columns of the bar on screen.
      this.#write(`\r\u001b[${this.#drawn}A\u001b[0J`);
      this.#drawn = 0;
    }
  }

  /** One TTY tick: print what running steps wrote, then redraw the block. */
  #tick(): void {
    this.#lines(this.#output.poll());
    this.#redraw();
  }

  /** A block line cut to the terminal width, so each takes exactly one row (the erase counts rows). */
  #fit(line: string, cols: number): string {
    const plain = line.replace(ANSI, '');
    if (plain.length < cols) return line;
    return `${plain.slice(0, Math.max(1, cols - 2))}…`;
  }

  /**
   * Time left: the steps not started take the average finished step's time; a running one the
   * average less what it ran, or, once past the average, half again what it ran (so the estimate
   * grows while a long step runs instead of standing at the short steps' average), shared by the
   * steps running at once.
   */
  #eta(elapsed: readonly number[], left: number): number {
    const avg = this.#ranMs / this.#ranDone;
    let work = Math.max(0, left - elapsed.length) * avg;
    for (const e of elapsed) work += e < avg ? avg - e : e / 2;
    return work / Math.max(1, elapsed.length);
  }

  #redraw(): void {
    if (!this.#dirty && ![...this.#steps.values()].some((s) => s.state === 'running')) return;
    this.#dirty = false;
    const c = this.#c;
    const now = Date.now();
    const total = this.#steps.size;
    let done = 0;
    for (const s of this.#steps.values()) if (RUN_STATES[s.state]?.final) done++;
    const width = Math.max(10, Math.min(30, this.#columns() - 70));
    const filled = total === 0 ? 0 : Math.round((done / total) * width);
    const bar = c.green('█'.repeat(filled)) + c.dim('░'.repeat(width - filled));
    const running = [...this.#steps.entries()].filter(([, s]) => s.state === 'running');
    const left = total - done;
    const eta = this.#ranDone > 0 && left > 0 ? ` eta ${formatDuration(this.#eta(running.map(([, s]) => now - s.since), left))}` : '';
    const parts: string[] = [];
    for (const st of Object.keys(RUN_STATES) as StepState[]) {
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
    const cols = Math.max(20, this.#columns());
    this.#write(`${lines.map((l) => this.#fit(l, cols)).join('\n')}\n`);
    this.#drawn = lines.length;
  }
}
