/**
 * Discovery of a long array of steps: one chunk's state read is in flight while the next chunk
 * is expanded (discover.ts `pull`). Reads that land out of order, a read that fails while a later
 * one is in flight, and rebuilds across chunks give what reading chunk after chunk gives.
 */
import { describe, expect, it } from 'vitest';
import { StepSpec } from '@cairn/core';
import type { RecordWant, StoredState } from '../src/store/store.js';
import { StepRunner } from '../src/index.js';
import { AsyncMemoryStore } from './helpers/async-store.js';
import { memoryLogger } from './helpers/graph.js';

/** A chain of `n` steps (each depends on the one before), listed dependencies first: every chunk depends on the one before it. */
function chain(n: number, calls: number[]): StepSpec[] {
  const specs: StepSpec[] = [];
  for (let i = 0; i < n; i++) {
    specs.push(new StepSpec({ name: `s${i}`, hashAttrs: { i }, deps: i > 0 ? [specs[i - 1] as StepSpec] : [], fn: () => void calls.push(i) }));
  }
  return specs;
}

/** Answers every second discovery batch late, so a later chunk's states land before an earlier one's (one step's reads: at once). */
class ShuffledReads extends AsyncMemoryStore {
  #batch = 0;
  failBatch = -1;
  /** Counts batches from 0 again: the next run's first chunk is answered late. */
  restart(): void {
    this.#batch = 0;
  }
  override readStates(paths: readonly string[], want: readonly RecordWant[] | RecordWant): Promise<StoredState[]> {
    if (paths.length < 100) return super.readStates(paths, want);
    const n = this.#batch++;
    const answer = super.readStates(paths, want);
    const late = n % 2 === 0 ? 30 : 0;
    return new Promise((resolve, reject) =>
      setTimeout(() => (n === this.failBatch ? reject(new Error(`read ${n} failed`)) : resolve(answer)), late),
    );
  }
}

describe('discovery with reads in flight', () => {
  it('runs a 5,000-step chain exactly once with reads landing out of order, then serves it all', async () => {
    const calls: number[] = [];
    const specs = chain(5000, calls);
    const store = new ShuffledReads();
    const r = new StepRunner({ prefix: '/p', store, logger: memoryLogger() });
    expect((await r.run(specs)).counts).toEqual({ succeeded: 5000 });
    expect(calls).toEqual(Array.from({ length: 5000 }, (_, i) => i));
    calls.length = 0;
    expect((await r.run(specs)).counts).toEqual({ cached: 5000 });
    expect(calls).toEqual([]);
  });

  it('a read that fails while the next chunk is in flight fails the run with that error, once', async () => {
    const store = new ShuffledReads();
    store.failBatch = 0; // late: the second chunk's read is issued (and answered) before it fails
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      const r = new StepRunner({ prefix: '/p', store, logger: memoryLogger() });
      await expect(r.run(chain(3000, []))).rejects.toThrow(/read 0 failed/);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('a rebuild of the chain root across chunks reruns everything downstream of it', async () => {
    const calls: number[] = [];
    const specs = chain(3000, calls);
    const store = new ShuffledReads();
    const r = new StepRunner({ prefix: '/p', store, logger: memoryLogger() });
    await r.run(specs);
    calls.length = 0;
    store.restart(); // the first chunk's states land after the second's
    expect((await r.run(specs, { rebuild: ['s0'] })).counts).toEqual({ succeeded: 3000 });
    expect(calls.length).toBe(3000);
  });
});
