/**
 * Writes one run's journal (entry.ts) through its store's browser, so a run of any runner (the
 * CLI's or a user's script) on any store (local, memory, S3) can be listed and followed by
 * `cairn ui` and reported by `cairn report`.
 *
 * Each event is encoded as it comes (line.ts) and written in batches: every
 * {@link FLUSH_MS} on a store that appends (`StoreBrowser.appendFile`: local files, memory),
 * while a store that cannot append (an object store) gets the whole journal rewritten every
 * {@link OBJECT_FLUSH_MS} or less often for a big journal ({@link OBJECT_FLUSH_SHARE}); all of it
 * at {@link RunJournal.close}. A journal that cannot be written is given up with one message:
 * the run matters more.
 */
import type { RunnerEvent } from '../events.js';
import type { StoreBrowser } from '../store/store.js';
import type { JournalPlan } from './entry.js';
import type { StepSpec } from '@cairn/core';
import { journalText } from './line.js';
import { writePlan } from './plan.js';
import { journalFile } from './paths.js';

/** How often new lines are appended on a store that appends (`cairn ui` looks once a second). */
export const FLUSH_MS = 250;
/** How often a journal on a store that cannot append is rewritten while the run goes on (one PUT each). */
export const OBJECT_FLUSH_MS = 2000;
/** A rewrite waits at least this many times as long as the last one took, so a big journal costs the run ≤ 10 % of one upload stream. */
export const OBJECT_FLUSH_SHARE = 10;

/** Bytes of the buffers lines are encoded into: the first is small (most runs are), each next one twice the last, up to the largest. A line longer than a quarter of one gets its own. */
const FIRST_CHUNK = 16 << 10;
const LARGEST_CHUNK = 1 << 20;
const NEWLINE = 0x0a;

/** Appends one run's events and plan to its journal; see the file's comment. */
export class RunJournal {
  readonly #browse: StoreBrowser;
  readonly #runId: string;
  readonly #file: string;
  readonly #append: boolean;
  readonly #onError: (error: unknown) => void;
  /**
   * Lines are encoded as they come into off-heap buffers: the event and its text die young,
   * where keeping either until the flush made the collector copy them into the old generation
   * (most of the journal's cost on a 100k-step run).
   */
  #chunk: Buffer = Buffer.allocUnsafeSlow(FIRST_CHUNK);
  /** Bytes of `#chunk` used, and where the part not yet handed to the store starts. */
  #used = 0;
  #from = 0;
  /** Encoded bytes not yet handed to the store. */
  #pending: Buffer[] = [];
  /** Every byte so far, for a store that is rewritten whole. */
  readonly #all: Buffer[] = [];
  /** Lines kept for a rewrite that are not in the store yet. */
  #unwritten = false;
  #failed = false;
  #closed = false;
  #flushing: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #intervalMs: number;

  /** `onError`: told once when the journal cannot be written (it is then given up). */
  constructor(browse: StoreBrowser, prefix: string, runId: string, onError: (error: unknown) => void = () => undefined) {
    this.#browse = browse;
    this.#runId = runId;
    this.#file = journalFile(prefix, runId);
    this.#append = browse.appendFile !== undefined;
    this.#intervalMs = this.#append ? FLUSH_MS : OBJECT_FLUSH_MS;
    this.#onError = onError;
  }

  /** The journal's file. */
  get file(): string {
    return this.#file;
  }

  /** Records one event; it reaches the store at the next flush. */
  write(entry: RunnerEvent | JournalPlan): void {
    if (this.#failed || this.#closed) return;
    this.#put(journalText(entry));
    this.#newline();
  }

  /** Records the run's plan (plan.ts): `targets` and everything upstream of them under `prefix`. */
  plan(prefix: string, targets: readonly StepSpec[]): void {
    if (this.#failed || this.#closed) return;
    writePlan(this.#put, this.#runId, prefix, targets);
    this.#newline();
  }

  /** Encodes `text` after what was written. */
  readonly #put = (text: string): void => {
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    const most = text.length * 3;
    if (most > LARGEST_CHUNK >> 2) {
      this.#cut();
      this.#pending.push(Buffer.from(text));
      return;
    }
    if (this.#used + most + 1 > this.#chunk.length) {
      this.#cut();
      this.#chunk = Buffer.allocUnsafeSlow(Math.max(most + 1, Math.min(LARGEST_CHUNK, this.#chunk.length * 2)));
      this.#used = this.#from = 0;
    }
    this.#used += this.#chunk.write(text, this.#used);
  };

  /** Ends a line (`#put` always leaves room for it). */
  #newline(): void {
    if (this.#used >= this.#chunk.length) this.#put('\n');
    else this.#chunk[this.#used++] = NEWLINE;
    this.#timer ??= setTimeout(this.#tick, this.#intervalMs).unref();
  }

  /** Moves the bytes of `#chunk` not handed over yet to `#pending` (never rewritten: the chunk only grows past them). */
  #cut(): void {
    if (this.#used > this.#from) this.#pending.push(this.#chunk.subarray(this.#from, this.#used));
    this.#from = this.#used;
  }

  /** One timer tick: flush, then wait for the next entry (no timer while nothing is left to write). */
  readonly #tick = (): void => {
    void this.#flush().finally(() => {
      this.#timer = undefined;
      if (!this.#closed && (this.#used > this.#from || this.#pending.length > 0 || this.#unwritten)) this.#timer = setTimeout(this.#tick, this.#intervalMs).unref();
    });
  };

  /** Writes what is pending (one write at a time: appends stay in order). */
  #flush(): Promise<void> {
    if (this.#flushing !== undefined) return this.#flushing.then(() => this.#flush());
    if (this.#failed) return Promise.resolve();
    this.#cut();
    const batch = this.#pending;
    this.#pending = [];
    if (!this.#append && batch.length > 0) {
      this.#all.push(...batch);
      this.#unwritten = true;
    }
    if (this.#append ? batch.length === 0 : !this.#unwritten) return Promise.resolve();
    const t0 = Date.now();
    let write: Promise<void>;
    if (this.#append) write = (this.#browse.appendFile as NonNullable<StoreBrowser['appendFile']>)(this.#file, batch.length === 1 ? (batch[0] as Buffer) : Buffer.concat(batch));
    else {
      this.#unwritten = false;
      write = this.#browse.writeFile(this.#file, Buffer.concat(this.#all));
    }
    this.#flushing = write
      .then(
        () => {
          if (!this.#append) this.#intervalMs = Math.max(OBJECT_FLUSH_MS, (Date.now() - t0) * OBJECT_FLUSH_SHARE);
        },
        (err: unknown) => {
          // A rewrite that fails mid-run is tried again at the next tick (it holds every line);
          // an append that fails would leave a hole, and a failure at the close is final.
          if (!this.#append && !this.#closed) {
            this.#unwritten = true;
            return;
          }
          this.#failed = true;
          this.#onError(err);
        },
      )
      .finally(() => (this.#flushing = undefined));
    return this.#flushing;
  }

  /** Writes everything pending and stops; resolves once it is in the store (never rejects). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#flush();
  }
}
