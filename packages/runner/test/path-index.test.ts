import { describe, expect, it } from 'vitest';
import { PathIndex } from '../src/path-index.js';
import { MemoryStore } from '../src/index.js';
import { mulberry32 } from '../../../tools/testenv/rng.mjs';

interface Item {
  readonly path: string;
  readonly n: number;
}

/** Random adds, lookups and deletes, checked against a Map after every operation. */
function fuzz(paths: readonly string[], ops: number, seed: number): void {
  const random = mulberry32(seed);
  const index = new PathIndex<Item>();
  const model = new Map<string, Item>();
  for (let k = 0; k < ops; k++) {
    // A fresh string object each time: hits must compare characters, not only identity.
    const path = `${paths[Math.floor(random() * paths.length)] as string}`.split('').join('');
    const r = random();
    if (r < 0.5) {
      if (index.get(path) === undefined) {
        const item = { path, n: k };
        index.add(item);
        model.set(path, item);
      }
    } else if (r < 0.8) {
      expect(index.delete(path)).toBe(model.delete(path));
    } else if (r < 0.802) {
      // Room for more than are held (as a run reserves for its input), mid-stream.
      index.reserve(index.size + Math.floor(random() * 3000));
    } else {
      expect(index.get(path)).toBe(model.get(path));
    }
    expect(index.size).toBe(model.size);
  }
  for (const p of paths) expect(index.get(p)).toBe(model.get(p));
  expect([...index.values()]).toEqual([...model.values()]);
}

describe('PathIndex', () => {
  it('agrees with a Map through adds, deletes and growth', () => {
    const paths = Array.from({ length: 5000 }, (_, i) => `/prefix/step${i}-${(i * 2654435761 >>> 0).toString(16).padStart(16, '0')}`);
    fuzz(paths, 40_000, 1);
  });

  it('tells apart paths that share long prefixes and suffixes', () => {
    const tail = '/'.padEnd(60, 'x');
    const paths = Array.from({ length: 300 }, (_, i) => `/root${i}${tail}`);
    fuzz(paths, 6_000, 2);
  });

  it('keeps insertion order and renumbers after deletes when it grows', () => {
    const index = new PathIndex<Item>();
    for (let i = 0; i < 600; i++) index.add({ path: `/p/${i}`, n: i });
    for (let i = 0; i < 600; i += 2) expect(index.delete(`/p/${i}`)).toBe(true);
    for (let i = 600; i < 2000; i++) index.add({ path: `/p/${i}`, n: i });
    const ns = [...index.values()].map((x) => x.n);
    const visited: number[] = [];
    index.forEach((x, out) => out.push(x.n), visited);
    expect(visited).toEqual(ns);
    expect(ns).toEqual([...Array.from({ length: 300 }, (_, i) => 2 * i + 1), ...Array.from({ length: 1400 }, (_, i) => 600 + i)]);
    for (let i = 0; i < 2000; i++) expect(index.get(`/p/${i}`)?.n).toBe(i < 600 && i % 2 === 0 ? undefined : i);
  });
});

describe('MemoryStore.entries', () => {
  it('reads like a Map of the entries by path, and deletes', async () => {
    const store = new MemoryStore();
    store.put('/p/a', 'SUCCESS');
    store.put('/p/b', 'FAILED');
    expect(store.entries.size).toBe(2);
    expect([...store.entries.keys()]).toEqual(['/p/a', '/p/b']);
    expect(store.entries.get('/p/b')?.status).toBe('FAILED');
    expect(store.entries.delete('/p/a')).toBe(true);
    expect(store.entries.has('/p/a')).toBe(false);
    expect((await store.readStates(['/p/a', '/p/b'], false)).map((s) => s.status)).toEqual([null, 'FAILED']);
  });
});
