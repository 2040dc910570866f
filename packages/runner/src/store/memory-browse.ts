/**
 * How tools read a {@link MemoryStore} ({@link StoreBrowser}): its steps from the entry table,
 * and the few files tools write into a store (run journals) kept in memory beside it. Steps'
 * own output files are not the memory store's (it stages nothing), so they are not listed.
 */
import type { MemoryEntries } from './memory.js';
import type { FoundStep, ListedFile, StoreBrowser } from './store.js';

const under = (dir: string, path: string) => path.startsWith(`${dir.replace(/\/+$/, '')}/`);

/** Levels of `path` below `prefix` (`prefix/a/b` is 2). */
function depthBelow(prefix: string, path: string): number {
  const rest = path.slice(prefix.replace(/\/+$/, '').length + 1);
  return rest.split('/').length;
}

/** A file tools wrote: its bytes, and what was appended since they were last joined. */
interface MemoryFile {
  data: Uint8Array;
  more?: Uint8Array[] | undefined;
  at: number;
}

/** The memory store's browser. */
export class MemoryBrowser implements StoreBrowser {
  readonly #entries: MemoryEntries;
  readonly #files = new Map<string, MemoryFile>();

  constructor(entries: MemoryEntries) {
    this.#entries = entries;
  }

  async findSteps(prefix: string, maxDepth: number): Promise<readonly FoundStep[]> {
    const out: FoundStep[] = [];
    for (const e of this.#entries.values()) {
      if (!under(prefix, e.path) || depthBelow(prefix, e.path) > maxDepth || e.path.includes('/.cairn/')) continue;
      if (e.status === undefined && e.record === undefined && e.deferred === undefined && e.lease === undefined) continue;
      out.push({ path: e.path, leased: e.lease !== undefined });
    }
    return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  async listFiles(dir: string): Promise<readonly ListedFile[]> {
    const out: ListedFile[] = [];
    for (const [path, f] of this.#files) if (under(dir, path)) out.push({ path, lastModified: f.at });
    return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  async readFile(path: string): Promise<Uint8Array | null> {
    const f = this.#files.get(path);
    if (f === undefined) return null;
    if (f.more !== undefined) {
      const parts = [f.data, ...f.more];
      const joined = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
      let at = 0;
      for (const p of parts) {
        joined.set(p, at);
        at += p.length;
      }
      f.data = joined;
      f.more = undefined;
    }
    return f.data;
  }

  async writeFile(path: string, data: string | Uint8Array): Promise<void> {
    this.#files.set(path, { data: typeof data === 'string' ? new TextEncoder().encode(data) : new Uint8Array(data), at: Date.now() });
  }

  /** Kept as parts, joined when read: a journal appended to in many batches is not copied at each. */
  async appendFile(path: string, data: string | Uint8Array): Promise<void> {
    const f = this.#files.get(path);
    // A copy: what is handed in may be a view of a larger buffer the caller goes on filling.
    const add = typeof data === 'string' ? new TextEncoder().encode(data) : data.slice();
    if (f === undefined) this.#files.set(path, { data: add, at: Date.now() });
    else {
      (f.more ??= []).push(add);
      f.at = Date.now();
    }
  }

  async remove(path: string): Promise<void> {
    for (const p of [...this.#entries.keys()]) if (p === path || under(path, p)) this.#entries.delete(p);
    for (const p of [...this.#files.keys()]) if (under(path, p)) this.#files.delete(p);
  }
}
