// The last run is kept after it ends (run/shapes.ts: V8 keeps its objects' shapes for the next
// run), emptied first: its steps, specs, results and secret values must still be freed (what the
// runner was configured with, its store and executors, stays reachable until the next run ends).
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { apply, lower, secret, type StepSpec } from '@cairn/core';
import { LocalStore, MemoryStore, StepRunner } from '../src/index.js';
import { keptRun } from '../src/run/shapes.js';
import { memoryLogger, tempDirs } from './helpers/graph.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const dir = tempDirs();

/** Collects until `refs` are all cleared (a WeakRef lives at least to the end of the current job). */
async function collected(refs: readonly WeakRef<object>[]): Promise<boolean> {
  for (let i = 0; i < 20; i++) {
    await new Promise((r) => setTimeout(r, 5));
    gc();
    if (refs.every((r) => r.deref() === undefined)) return true;
  }
  return false;
}

/** A small graph: a step that returns a large value, one that reads it, one that reads a secret. */
function graph(): StepSpec[] {
  const a = apply({ name: 'kept-a', version: 'v1', fn: () => ({ rows: new Array(10_000).fill('row') }), inputs: {} });
  const b = apply({ name: 'kept-b', version: 'v1', fn: (x: { a: unknown }) => String(x.a).length, inputs: { a } });
  const c = apply({ name: 'kept-c', version: 'v1', fn: (x: { b: string; token: string }) => x.b.length + x.token.length, inputs: { b, token: secret('CAIRN_TEST_KEPT_TOKEN') } });
  return lower([a, b, c]) as StepSpec[];
}

describe('the run kept after it ends', () => {
  it('holds none of the steps, specs, results or secret values of the run', async () => {
    process.env.CAIRN_TEST_KEPT_TOKEN = 'kept-secret-value';
    const refs: WeakRef<object>[] = [];
    await (async () => {
      const handles = graph();
      const runner = new StepRunner({ prefix: dir(), store: new LocalStore(), logger: memoryLogger() });
      const summary = await runner.run(handles, { handleSigint: false });
      expect(summary.counts).toEqual({ succeeded: 3 });
      const result = summary.outcome(handles[0] as StepSpec)?.result as object;
      expect(result).toMatchObject({ rows: expect.any(Array) });
      refs.push(new WeakRef(result), new WeakRef(summary), new WeakRef(handles[2] as object));
    })();
    const kept = keptRun();
    expect(kept).toBeDefined();
    expect(kept?.nodes.size).toBe(0);
    expect(kept?.config.secrets.any).toBe(false);
    expect(await collected(refs)).toBe(true);
    delete process.env.CAIRN_TEST_KEPT_TOKEN;
  });

  it('a later run replaces it, and a run that fails is emptied too', async () => {
    const store = new MemoryStore();
    const runner = new StepRunner({ prefix: '/kept', store, logger: memoryLogger() });
    const bad = apply({ name: 'kept-bad', version: 'v1', fn: () => {
      throw new Error('no');
    }, inputs: {} });
    await expect(runner.run([bad], { handleSigint: false })).rejects.toThrow(/kept-bad/);
    const first = keptRun();
    expect(first?.nodes.size).toBe(0);
    const ok = apply({ name: 'kept-ok', version: 'v1', fn: () => 1, inputs: {} });
    await runner.run([ok], { handleSigint: false });
    expect(keptRun()).not.toBe(first);
    expect(keptRun()?.nodes.size).toBe(0);
  });
});
