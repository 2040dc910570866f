/**
 * Look-up tables of one lowering: its nodes by `name@version` (to catch two different steps
 * sharing one) and its distinct versions, numbered. Used by lower.ts.
 */
import type { ArtifactStep } from './handle.js';
import { TableWriter } from './pack.js';

/**
 * The nodes of one lowering, findable by `name@version` (to catch two different steps
 * sharing one). An open-addressing table of node indices hashed on the name: a
 * million-entry `Map` of `name@version` strings costs several times more.
 */
export class IdentTable {
  readonly #sources: readonly ArtifactStep<unknown>[];
  /** Pairs (index + 1, name hash); index 0 marks an empty slot. Hashes are compared before handles are touched. */
  #slots = new Int32Array(2048);
  #count = 0;

  constructor(sources: readonly ArtifactStep<unknown>[]) {
    this.#sources = sources;
  }

  /** The node named `name@version`, or -1. */
  find(name: string, version: string): number {
    const slots = this.#slots;
    const mask = (slots.length >> 1) - 1;
    const h = hashName(name);
    for (let p = h & mask; ; p = (p + 1) & mask) {
      const at = slots[2 * p] as number;
      if (at === 0) return -1;
      if (slots[2 * p + 1] !== h) continue;
      const s = this.#sources[at - 1] as ArtifactStep<unknown>;
      if (s.name === name && s.version === version) return at - 1;
    }
  }

  /** Adds node `index` (named as its source, not already present). */
  add(index: number): void {
    this.#count++;
    if (4 * this.#count > this.#slots.length) {
      const old = this.#slots;
      this.#slots = new Int32Array(2 * old.length);
      for (let p = 0; p < old.length; p += 2) if (old[p] !== 0) this.#place((old[p] as number) - 1, old[p + 1] as number);
    }
    this.#place(index, hashName((this.#sources[index] as ArtifactStep<unknown>).name));
  }

  #place(index: number, h: number): void {
    const slots = this.#slots;
    const mask = (slots.length >> 1) - 1;
    let p = h & mask;
    while ((slots[2 * p] as number) !== 0) p = (p + 1) & mask;
    slots[2 * p] = index + 1;
    slots[2 * p + 1] = h;
  }
}

/** The distinct versions of one lowering, numbered in first-seen order. */
export class VersionTable {
  readonly writer = new TableWriter();
  readonly #ids = new Map<string, number>();
  #last = '';
  #lastId = -1;

  id(version: string): number {
    if (version === this.#last) return this.#lastId;
    let id = this.#ids.get(version);
    if (id === undefined) {
      id = this.#ids.size;
      this.#ids.set(version, id);
      this.writer.add(version);
    }
    this.#last = version;
    return (this.#lastId = id);
  }
}

/** FNV-1a over the UTF-16 code units. */
function hashName(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h | 0;
}
