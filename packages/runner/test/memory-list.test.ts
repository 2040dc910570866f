/**
 * `MemoryStore.list` answers from an index of the entries' directories: the same names a scan
 * of every entry gives (checked against that scan over random adds and deletes), without
 * scanning (a run lists each step name's directory once, so a scan made n new steps cost n²).
 */
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../src/index.js';

/** What `list` answered when it scanned every entry (the reference). */
function scan(paths: Iterable<string>, dir: string): string[] {
  const base = dir.endsWith('/') ? dir : `${dir}/`;
  const names = new Set<string>();
  for (const path of paths) {
    if (!path.startsWith(base)) continue;
    const name = path.slice(base.length).split('/')[0] as string;
    if (name !== '' && !name.startsWith('.')) names.add(name);
  }
  return [...names].sort();
}

/** A small deterministic generator (mulberry32), so a failure replays. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SEGMENTS = ['s', 'train', 'v1-00aa', 'v1-00bb', '.cairn', 'x', ''];

describe('MemoryStore.list', () => {
  it('gives what a scan of every entry gives, through random adds and deletes (nested paths, hidden and empty names, a path that is also a directory)', () => {
    const next = random(20261202);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)] as T;
    const store = new MemoryStore();
    const held = new Set<string>();
    const dirs = ['', '/', '/m', '/m/', '/m/s', '/m/s/', '/m/s/train', '/m/s/train/v1-00aa', '/m/x', 'rel', 'rel/s', 's3://b/p', 's3://b/p/train', 'nowhere'];
    for (let step = 0; step < 3000; step++) {
      const depth = 1 + Math.floor(next() * 4);
      const root = pick(['/m', 'rel', 's3://b/p', '']);
      const path = [root, ...Array.from({ length: depth }, () => pick(SEGMENTS))].join('/');
      if (held.has(path) && next() < 0.5) {
        store.entries.delete(path);
        held.delete(path);
      } else if (!held.has(path)) {
        store.put(path, 'SUCCESS');
        held.add(path);
      }
      // The index is made at the first listing (step 10), then kept up to date.
      if (step >= 10 && step % 29 === 0) for (const dir of dirs) expect([...(store.list(dir) as string[])].sort(), `${dir} after ${step} operations`).toEqual(scan(held, dir));
    }
    for (const path of [...held]) store.entries.delete(path);
    for (const dir of dirs) expect(store.list(dir)).toEqual([]);
  });

  it('does not scan the entries: listing one directory among many reads only what it returns', () => {
    const store = new MemoryStore();
    for (let i = 0; i < 2000; i++) store.put(`/m/step${i}/v1-${String(i).padStart(16, '0')}`, 'SUCCESS');
    // Every way to walk the table fails from here on: list must answer without a walk.
    const walked = () => {
      throw new Error('list walked every entry');
    };
    const table = store.entries as unknown as Record<string | symbol, unknown>;
    for (const k of ['keys', 'values', 'entries', 'forEach', Symbol.iterator]) table[k] = walked;
    for (let i = 0; i < 2000; i += 97) expect(store.list(`/m/step${i}`)).toEqual([`v1-${String(i).padStart(16, '0')}`]);
    store.put('/m/step5/v1-new', 'FAILED');
    expect([...(store.list('/m/step5') as string[])].sort()).toEqual(['v1-0000000000000005', 'v1-new']);
    expect(store.list('/m/none')).toEqual([]);
  });
});
