/**
 * The run journal: `cairn run` appends every runner event as a JSON line to
 * `{prefix}/.cairn/runs/{runId}.jsonl`, so `cairn report` can show a whole run — cache hits
 * and retries included, which step records alone do not hold. On a store that is not on this
 * filesystem (an object store) the journal is rewritten whole every {@link OBJECT_FLUSH_MS} (or
 * less often for a big journal: see {@link OBJECT_FLUSH_SHARE}) while the run goes on (so `cairn ui` can follow it) and once more when the run ends.
 */
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { hostname, userInfo } from 'node:os';
import { indexSpecs, type StepSpec } from '@cairn/core';
import type { RunnerEvent, Store } from '@cairn/runner';
import type { StoreView } from '../store-view.js';

/** Directory of the journals under a prefix (a path or a URL: joined with `/`, never collapsing `s3://`). */
export function journalDir(prefix: string): string {
  return `${prefix.replace(/\/+$/, '')}/.cairn/runs`;
}

/** How often a journal on an object store is rewritten while the run goes on (one PUT each). */
export const OBJECT_FLUSH_MS = 2000;
/** A rewrite waits at least this many times as long as the last one took, so a big journal costs the run ≤ 10 % of one upload stream. */
export const OBJECT_FLUSH_SHARE = 10;

/** An event as stored: errors flattened to `{ name, message, code }`. */
export type JournalEvent = RunnerEvent & { readonly error?: { name: string; message: string; code?: string } };

/**
 * The run's plan, the journal's second line (after `run-started`): every step the run may touch
 * with its dependencies, so a viewer (`cairn ui`) can draw the whole DAG before steps run.
 */
export interface JournalPlan {
  /** Entry kind. */
  readonly type: 'plan';
  /** The run. */
  readonly runId: string;
  /** Epoch milliseconds. */
  readonly time: number;
  /** Host the runner runs on. */
  readonly host: string;
  /** User the runner runs as. */
  readonly user: string;
  /** Names of the run's targets. */
  readonly targets: readonly string[];
  /** Steps, dependencies first: name, output path (the key of step events), indices of dependencies. */
  readonly steps: readonly { readonly name: string; readonly path: string; readonly deps: readonly number[] }[];
}

/** Any journal line. */
export type JournalEntry = JournalEvent | JournalPlan;

/** The plan entry of a run of `targets` under `prefix`. */
export function planEntry(runId: string, prefix: string, targets: readonly StepSpec[]): JournalPlan {
  const { nodes, index } = indexSpecs(targets);
  let user = 'unknown';
  try {
    user = userInfo().username;
  } catch {
    // no passwd entry (a container's uid)
  }
  return {
    type: 'plan',
    runId,
    time: Date.now(),
    host: hostname(),
    user,
    targets: targets.map((t) => t.name),
    steps: nodes.map((s) => ({ name: s.name, path: s.outputPath(prefix), deps: s.deps.map((d) => index.get(d) as number) })),
  };
}

/** Events as plain JSON data. */
export function eventToJson(event: RunnerEvent): JournalEvent {
  if (event.type !== 'step' || event.error === undefined) return event as JournalEvent;
  const e = event.error as { name?: unknown; message?: unknown; code?: unknown } | null;
  const error =
    typeof e === 'object' && e !== null
      ? { name: String(e.name ?? 'Error'), message: String(e.message ?? ''), ...(typeof e.code === 'string' ? { code: e.code } : {}) }
      : { name: 'Error', message: String(event.error) };
  return { ...event, error } as JournalEvent;
}

/** Appends events to one run's journal; created on the first event (when the run id is known). */
export class JournalWriter {
  readonly #prefix: string;
  readonly #store: Store;
  #stream: WriteStream | undefined;
  /** Lines kept for a store off this filesystem, written whole at `close`. */
  #lines: string[] | undefined;
  #runId: string | undefined;
  #failed = false;
  /** Lines not yet on the object store, and the flush in flight. */
  #dirty = false;
  #flushing: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #nextMs = OBJECT_FLUSH_MS;

  /** `store`: the run's store; one not on this filesystem (not `local`) gets the journal through its browser at `close`. */
  constructor(prefix: string, store: Store) {
    this.#prefix = prefix;
    this.#store = store;
  }

  /** Records one event. A journal that cannot be written is given up silently (the run matters more). */
  write(event: RunnerEvent | JournalPlan): void {
    if (this.#failed) return;
    const line = `${JSON.stringify(event.type === 'plan' ? event : eventToJson(event))}\n`;
    this.#runId ??= event.runId;
    if (this.#store.kind !== 'local') {
      (this.#lines ??= []).push(line);
      this.#dirty = true;
      this.#timer ??= setTimeout(() => this.#tick(), OBJECT_FLUSH_MS).unref();
      return;
    }
    try {
      if (this.#stream === undefined) {
        mkdirSync(journalDir(this.#prefix), { recursive: true });
        this.#stream = createWriteStream(journalFile(this.#prefix, event.runId), { flags: 'a' });
        this.#stream.on('error', () => (this.#failed = true));
      }
      this.#stream.write(line);
    } catch {
      this.#failed = true;
    }
  }

  /** Writes the whole journal to the object store when lines were added since the last write. */
  #flush(): Promise<void> {
    const browse = this.#store.browse;
    if (this.#flushing !== undefined || !this.#dirty || browse === undefined || this.#lines === undefined || this.#runId === undefined || this.#failed) return this.#flushing ?? Promise.resolve();
    this.#dirty = false;
    const t0 = Date.now();
    this.#flushing = browse
      .writeFile(journalFile(this.#prefix, this.#runId), this.#lines.join(''))
      // A write that fails mid-run is retried at the next tick; only the final one gives up.
      .catch(() => void (this.#dirty = true))
      .finally(() => {
        this.#flushing = undefined;
        this.#nextMs = Math.max(OBJECT_FLUSH_MS, (Date.now() - t0) * OBJECT_FLUSH_SHARE);
      });
    return this.#flushing;
  }

  /** One timer tick: flush, then schedule the next (until `close`). */
  #tick(): void {
    void this.#flush().finally(() => {
      if (this.#timer !== undefined) this.#timer = setTimeout(() => this.#tick(), this.#nextMs).unref();
    });
  }

  /** Flushes and closes. */
  async close(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#flushing;
    clearTimeout(this.#timer);
    const browse = this.#store.browse;
    if (browse !== undefined && this.#store.kind !== 'local' && this.#lines !== undefined && this.#runId !== undefined && !this.#failed) {
      await browse.writeFile(journalFile(this.#prefix, this.#runId), this.#lines.join('')).catch(() => (this.#failed = true));
      this.#lines = undefined;
    }
    const s = this.#stream;
    if (s === undefined) return;
    await new Promise<void>((resolve) => s.end(resolve));
  }
}

/** The journal file of one run (it may not exist: runs made through the API write none). */
export function journalFile(prefix: string, runId: string): string {
  return `${journalDir(prefix)}/${runId}.jsonl`;
}

/** The newest journal file of the store, or undefined. */
export async function newestJournal(view: StoreView): Promise<string | undefined> {
  let best: { path: string; lastModified: number } | undefined;
  for (const f of await view.listFiles(journalDir(view.prefix))) {
    if (f.path.endsWith('.jsonl') && (best === undefined || f.lastModified > best.lastModified)) best = f;
  }
  return best?.path;
}
