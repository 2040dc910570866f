/**
 * A run journal on a store that is not on this filesystem (an object store, reached through
 * `Store.browse`) is rewritten whole while the run goes on, so `cairn ui` can follow the run,
 * and once more at the end. The store's browser is the boundary here: a recorder of writes.
 */
import type { RunnerEvent, Store } from '@cairn/runner';
import { describe, expect, it } from 'vitest';
import { JournalWriter, OBJECT_FLUSH_MS } from '../src/report/journal.js';

function recordingStore(): { store: Store; writes: { path: string; text: string; at: number }[] } {
  const writes: { path: string; text: string; at: number }[] = [];
  const browse = {
    writeFile: async (path: string, text: string) => void writes.push({ path, text, at: Date.now() }),
  };
  return { store: { browse } as unknown as Store, writes };
}

const event = (i: number): RunnerEvent => ({ type: 'step', runId: 'r1', step: `s${i}`, path: `s3://b/p/s${i}`, state: 'running', attempt: 1, time: i });

describe('JournalWriter on an object store', () => {
  it('rewrites the journal while the run goes on, and whole at close', async () => {
    const { store, writes } = recordingStore();
    const w = new JournalWriter('s3://b/p', store);
    w.write(event(1));
    expect(writes).toEqual([]); // nothing per event
    await new Promise((r) => setTimeout(r, OBJECT_FLUSH_MS + 1500));
    expect(writes.map((x) => [x.path, x.text.split('\n').length - 1])).toEqual([['s3://b/p/.cairn/runs/r1.jsonl', 1]]);
    w.write(event(2));
    await new Promise((r) => setTimeout(r, OBJECT_FLUSH_MS + 1500));
    expect(writes.length).toBe(2); // the next tick picks up the new line (the chain keeps going after an idle tick)
    expect(writes[1]!.text.split('\n').length - 1).toBe(2);
    await new Promise((r) => setTimeout(r, OBJECT_FLUSH_MS + 300));
    expect(writes.length).toBe(2); // nothing new: no rewrite
    w.write(event(3));
    await w.close();
    expect(writes.length).toBe(3);
    expect(writes[2]!.text.split('\n').length - 1).toBe(3);
    await new Promise((r) => setTimeout(r, OBJECT_FLUSH_MS + 300));
    expect(writes.length).toBe(3); // closed: no timer left
  }, 20_000);
});
