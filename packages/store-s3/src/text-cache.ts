/**
 * Small objects (records) kept by ETag, in memory and optionally on this host's disk, so a warm
 * rerun that lists a record's ETag need not GET it again. An ETag is the provider's digest of
 * the bytes: a cached text whose ETag matches the listed one is exactly the object's text.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

interface Entry {
  readonly etag: string;
  readonly text: string;
}

/** Texts by bucket/key, valid for one ETag each. */
export class TextCache {
  readonly #mem = new Map<string, Entry>();
  readonly #dir: string | undefined;
  readonly #max: number;
  #dirReady = false;

  /** `dir`: where to keep texts across processes (none: memory only). `max`: entries kept in memory. */
  constructor(dir: string | undefined, max = 200_000) {
    this.#dir = dir;
    this.#max = max;
  }

  #file(id: string): string {
    const h = createHash('sha1').update(id).digest('hex');
    return join(this.#dir as string, h.slice(0, 2), `${h.slice(2)}.json`);
  }

  /** The text of `bucket/key` if the cached copy has ETag `etag`. */
  get(bucket: string, key: string, etag: string): string | undefined {
    const id = `${bucket}/${key}`;
    const m = this.#mem.get(id);
    if (m !== undefined) return m.etag === etag ? m.text : undefined;
    if (this.#dir === undefined) return undefined;
    try {
      const e = JSON.parse(readFileSync(this.#file(id), 'utf8')) as Entry;
      if (e.etag !== etag) return undefined;
      this.#remember(id, e);
      return e.text;
    } catch {
      return undefined;
    }
  }

  /** Keeps `text` as the content of `bucket/key` at ETag `etag`. */
  set(bucket: string, key: string, etag: string, text: string): void {
    const id = `${bucket}/${key}`;
    const e = { etag, text };
    this.#remember(id, e);
    if (this.#dir === undefined) return;
    try {
      const file = this.#file(id);
      if (!this.#dirReady) {
        mkdirSync(this.#dir, { recursive: true });
        this.#dirReady = true;
      }
      mkdirSync(join(file, '..'), { recursive: true });
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, JSON.stringify(e));
      renameSync(tmp, file);
    } catch {
      // A cache that cannot be written only costs a GET later.
    }
  }

  #remember(id: string, e: Entry): void {
    if (this.#mem.size >= this.#max && !this.#mem.has(id)) {
      const oldest = this.#mem.keys().next().value;
      if (oldest !== undefined) this.#mem.delete(oldest);
    }
    this.#mem.set(id, e);
  }
}
