/**
 * Items keyed by their output path, for the run's steps and the in-memory store's entries.
 *
 * A `Map` keyed by path strings costs several cache misses per lookup on a large run: a bucket,
 * then for each entry in the bucket's chain its key string, loaded to compare it. A run of 10^5
 * steps looks up each fresh path two or three times, and those misses were a third of the
 * scheduler's time. Here a lookup hashes the path in JS and probes an open-addressing table
 * (linear probing, at most half full) of 32-bit pairs: the item's number and its path's hash.
 * A lookup that finds nothing touches one cache line; a hit loads the item and compares paths
 * (usually the same string object, so no characters are compared). Growing never touches
 * the items.
 *
 * Most lookups of a run find nothing (a fresh step), and on a large table even that one cache
 * line is a miss. A filter of 4 bits a slot (an eighth of the table, so it stays in cache) is
 * asked first: a clear bit means no item has the hash. Deleting leaves bits set (a filter that
 * says "maybe" too often is only slower); growing rebuilds it.
 */
export class PathIndex<T extends { readonly path: string }> {
  /** Two words a slot: item number + 1 (0: empty), the path's hash (its low bits pick the slot). */
  #t: Int32Array = new Int32Array(0);
  #mask = 0;
  /** The filter: bit `filterBit(h, #shift)` is set for the hash `h` of every item (and of deleted ones). */
  #bits: Int32Array = new Int32Array(0);
  /** 32 − log2(filter bits). */
  #shift = 0;
  /**
   * Items by number, in insertion order (undefined where one was deleted): `#items[0 .. #count)`.
   * The array may be longer (`reserve` sizes it once instead of letting pushes regrow it).
   */
  #items: (T | undefined)[] = [];
  #count = 0;
  #size = 0;
  /** The last path hashed, and its hash: `add` after a missed `get` does not hash it again. */
  #lastPath: string | undefined = undefined;
  #lastHash = 0;

  constructor() {
    this.clear();
  }

  /** Items held. */
  get size(): number {
    return this.#size;
  }

  /** The item at `path`. */
  get(path: string): T | undefined {
    const h = this.#hash(path);
    const f = filterBit(h, this.#shift);
    if ((((this.#bits[f >>> 5] as number) >>> (f & 31)) & 1) === 0) return undefined;
    const t = this.#t;
    const mask = this.#mask;
    for (let s = h & mask; ; s = (s + 1) & mask) {
      const n = t[2 * s] as number;
      if (n === 0) return undefined;
      if (t[2 * s + 1] === h) {
        const item = this.#items[n - 1] as T;
        if (item.path === path) return item;
      }
    }
  }

  /** Makes room for `n` items in all without growing again (a caller that knows the count saves the rehashes). */
  reserve(n: number): void {
    while (2 * n > this.#mask + 1) this.#grow();
    if (this.#items.length < n) {
      const items = new Array<T | undefined>(n);
      for (let i = 0; i < this.#count; i++) items[i] = this.#items[i];
      this.#items = items;
    }
  }

  /** Adds `item` (the caller checked that no item has its path). */
  add(item: T): void {
    if (2 * (this.#size + 1) > this.#mask + 1) this.#grow();
    const h = this.#hash(item.path);
    this.#items[this.#count++] = item;
    this.#size++;
    put(this.#t, this.#mask, h, this.#count);
    setFilterBit(this.#bits, filterBit(h, this.#shift));
  }

  /** Removes the item at `path`; false when there is none. */
  delete(path: string): boolean {
    const h = this.#hash(path);
    const t = this.#t;
    const mask = this.#mask;
    let s = h & mask;
    for (; ; s = (s + 1) & mask) {
      const n = t[2 * s] as number;
      if (n === 0) return false;
      if (t[2 * s + 1] === h && (this.#items[n - 1] as T).path === path) break;
    }
    this.#items[(t[2 * s] as number) - 1] = undefined;
    this.#size--;
    // Backward-shift deletion: move later entries of the probe run into the hole.
    for (let hole = s, j = (s + 1) & mask; ; j = (j + 1) & mask) {
      const n = t[2 * j] as number;
      if (n === 0) {
        t[2 * hole] = 0;
        t[2 * hole + 1] = 0;
        return true;
      }
      const home = (t[2 * j + 1] as number) & mask;
      // The entry at j may fill the hole unless its home slot lies cyclically in (hole, j].
      if (hole <= j ? home <= hole || home > j : home <= hole && home > j) {
        t[2 * hole] = n;
        t[2 * hole + 1] = t[2 * j + 1] as number;
        hole = j;
      }
    }
  }

  /** Removes every item. */
  clear(): void {
    this.#items = [];
    this.#count = 0;
    this.#size = 0;
    this.#install(new Int32Array(2 * FIRST_SLOTS), FIRST_SLOTS - 1);
  }

  /**
   * Calls `fn(item, arg)` with every item, in insertion order (no iterator objects: a run ends by
   * visiting every step). `arg` lets `fn` be one module-level function instead of a closure per call.
   */
  forEach<A>(fn: (item: T, arg: A) => void, arg: A): void {
    const items = this.#items;
    for (let i = 0; i < this.#count; i++) {
      const item = items[i];
      if (item !== undefined) fn(item, arg);
    }
  }

  /** Every item, in insertion order. */
  *values(): IterableIterator<T> {
    for (let i = 0; i < this.#count; i++) {
      const item = this.#items[i];
      if (item !== undefined) yield item;
    }
  }

  #hash(path: string): number {
    if (path === this.#lastPath) return this.#lastHash;
    this.#lastPath = path;
    return (this.#lastHash = hashPath(path));
  }

  #grow(): void {
    const old = this.#t;
    const mask = 2 * (this.#mask + 1) - 1;
    const t = new Int32Array(2 * (mask + 1));
    // Deleted items left holes: the live ones are renumbered.
    let renumber: Int32Array | undefined;
    if (this.#size !== this.#count) {
      const live: T[] = [];
      renumber = new Int32Array(this.#count + 1);
      for (let i = 0; i < this.#count; i++) {
        const item = this.#items[i];
        if (item !== undefined) renumber[i + 1] = live.push(item);
      }
      this.#items = live;
      this.#count = live.length;
    }
    for (let at = 0; at < old.length; at += 2) {
      const n = old[at] as number;
      if (n !== 0) put(t, mask, old[at + 1] as number, renumber === undefined ? n : (renumber[n] as number));
    }
    this.#install(t, mask);
  }

  /** Makes `t` the table and builds the filter, four bits a slot, from its hashes (deleted items drop out). */
  #install(t: Int32Array, mask: number): void {
    const bits = new Int32Array((mask + 1) / 8);
    const shift = Math.clz32(mask + 1) - 1; // 32 − log2(4 × slots)
    for (let at = 1; at < t.length; at += 2) if (t[at - 1] !== 0) setFilterBit(bits, filterBit(t[at] as number, shift));
    this.#t = t;
    this.#mask = mask;
    this.#bits = bits;
    this.#shift = shift;
  }
}

/** Slots of a new or cleared table. */
const FIRST_SLOTS = 1024;

/** The filter bit of hash `h` (multiplicative hashing: the top bits, independent of the slot's low bits). */
function filterBit(h: number, shift: number): number {
  return Math.imul(h, 0x9e3779b1) >>> shift;
}

function setFilterBit(bits: Int32Array, f: number): void {
  bits[f >>> 5] = (bits[f >>> 5] as number) | (1 << (f & 31));
}

function put(t: Int32Array, mask: number, h: number, stored: number): void {
  let s = h & mask;
  while (t[2 * s] !== 0) s = (s + 1) & mask;
  t[2 * s] = stored;
  t[2 * s + 1] = h;
}

/**
 * A 32-bit hash of `path`: FNV-1a over pairs of UTF-16 code units (one multiply per two
 * characters: the loop is a chain of multiplies, so this halves it), finished with murmur3's
 * fmix32 so that both the low bits (the slot) and the top bits (the filter) are mixed.
 */
function hashPath(path: string): number {
  const n = path.length;
  let a = 0x811c9dc5;
  let i = 0;
  for (; i + 1 < n; i += 2) a = Math.imul(a ^ (path.charCodeAt(i) | (path.charCodeAt(i + 1) << 16)), 0x01000193);
  if (i < n) a = Math.imul(a ^ path.charCodeAt(i), 0x01000193);
  a ^= a >>> 16;
  a = Math.imul(a, 0x85ebca6b);
  a ^= a >>> 13;
  a = Math.imul(a, 0xc2b2ae35);
  return a ^ (a >>> 16);
}
