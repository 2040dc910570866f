/**
 * The run journal: `cairn run` appends every runner event as a JSON line to
 * `{prefix}/.cairn/runs/{runId}.jsonl`, so `cairn report` can show a whole run — cache hits
 * and retries included, which step records alone do not hold.
 */
import { createWriteStream, existsSync, mkdirSync, readdirSync, statSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import type { RunnerEvent } from '@cairn/runner';

/** Directory of the journals under a prefix. */
export function journalDir(prefix: string): string {
  return join(prefix, '.cairn', 'runs');
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
  readonly #dir: string;
  #stream: WriteStream | undefined;
  #failed = false;

  constructor(prefix: string) {
    this.#dir = journalDir(prefix);
  }

  /** Records one event. A journal that cannot be written is given up silently (the run matters more). */
  write(event: RunnerEvent): void {
    if (this.#failed) return;
    try {
      if (this.#stream === undefined) {
        mkdirSync(this.#dir, { recursive: true });
        this.#stream = createWriteStream(join(this.#dir, `${event.runId}.jsonl`), { flags: 'a' }); // = journalFile(prefix, runId)
        this.#stream.on('error', () => (this.#failed = true));
      }
      this.#stream.write(`${JSON.stringify(eventToJson(event))}\n`);
    } catch {
      this.#failed = true;
    }
  }

  /** Flushes and closes. */
  async close(): Promise<void> {
    const s = this.#stream;
    if (s === undefined) return;
    await new Promise<void>((resolve) => s.end(resolve));
  }
}

/** The journal file of one run (it may not exist: runs made through the API write none). */
export function journalFile(prefix: string, runId: string): string {
  return join(journalDir(prefix), `${runId}.jsonl`);
}

/** The newest journal file under `prefix`, or undefined. */
export function newestJournal(prefix: string): string | undefined {
  const dir = journalDir(prefix);
  if (!existsSync(dir)) return undefined;
  let best: { file: string; mtime: number } | undefined;
  for (const name of readdirSync(dir)) {
    if (!name.endsWith('.jsonl')) continue;
    const file = join(dir, name);
    const mtime = statSync(file).mtimeMs;
    if (best === undefined || mtime > best.mtime) best = { file, mtime };
  }
  return best?.file;
}
