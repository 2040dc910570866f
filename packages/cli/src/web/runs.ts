/**
 * The runs of a store, from their journals (`{prefix}/.cairn/runs/*.jsonl`). Each journal is
 * folded once and then followed: a local journal is read from the byte where the last look
 * stopped; an object-store journal (rewritten whole while its run goes on) is fetched again
 * only when its modification time changed.
 */
import { open } from 'node:fs/promises';
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

/** Every run of one store, folded and kept up to date on demand. */
export class RunIndex {
  readonly #view: StoreView;
  readonly #runs = new Map<string, Followed>();

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
    return [...this.#runs.values()].map((r) => r.fold.summary()).sort((a, b) => b.start - a.start || (a.runId < b.runId ? 1 : -1));
  }

  /** One run, read up to its journal's end; undefined when the store has no such run. */
  async run(runId: string): Promise<RunFold | undefined> {
    let r = this.#runs.get(runId);
    if (r === undefined) {
      await this.list();
      r = this.#runs.get(runId);
      if (r === undefined) return undefined;
    }
    if (this.#view.local) await this.#read(r, Date.now());
    else {
      const f = (await this.#view.listFiles(journalDir(this.#view.prefix))).find((x) => x.path === r.file);
      if (f !== undefined && f.lastModified !== r.lastModified) await this.#read(r, f.lastModified);
    }
    return r.fold;
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
