/**
 * The run journal: `cairn run` appends every runner event as a JSON line to
 * `{prefix}/.cairn/runs/{runId}.jsonl`, so `cairn report` can show a whole run — cache hits
 * and retries included, which step records alone do not hold. On a store that is not on this
 * filesystem (an object store) the journal is written whole when the run ends.
 */
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import type { RunnerEvent, Store } from '@cairn/runner';
import type { StoreView } from '../store-view.js';

/** Directory of the journals under a prefix (a path or a URL: joined with `/`, never collapsing `s3://`). */
export function journalDir(prefix: string): string {
  return `${prefix.replace(/\/+$/, '')}/.cairn/runs`;
}

/** An event as stored: errors flattened to `{ name, message, code }`. */
export type JournalEvent = RunnerEvent & { readonly error?: { name: string; message: string; code?: string } };

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

  /** `store`: the run's store; one not on this filesystem (not `local`) gets the journal through its browser at `close`. */
  constructor(prefix: string, store: Store) {
    this.#prefix = prefix;
    this.#store = store;
  }

  /** Records one event. A journal that cannot be written is given up silently (the run matters more). */
  write(event: RunnerEvent): void {
    if (this.#failed) return;
    const line = `${JSON.stringify(eventToJson(event))}\n`;
    this.#runId ??= event.runId;
    if (this.#store.kind !== 'local') {
      (this.#lines ??= []).push(line);
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

  /** Flushes and closes. */
  async close(): Promise<void> {
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
