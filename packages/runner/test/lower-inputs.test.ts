/**
 * The caller's handles are lowered in one lowering call (lower-inputs.ts). Lowering memoizes
 * within a call (or a run's lowering session) only, so an array lowered chunk by chunk walked the
 * upstream the chunks share once per chunk: a warm rerun of a 100k-step pipeline given as handles
 * took 13 s instead of 1.
 */
import { describe, expect, it } from 'vitest';
import { type ArtifactStep, apply, hasCode, OUT } from '@cairn/core';
import { loweringWork } from '@cairn/core/internal';
import { MemoryStore, StepRunner } from '../src/index.js';
import { lowerInputs } from '../src/lower-inputs.js';

/** Lowering passes since the last reset (a `lower()` call, or a call of a run's lowering session). */
const lowered = {
  start: 0,
  get calls(): number {
    return loweringWork.calls - this.start;
  },
};

const quiet = { info() {}, warn() {}, error() {} };

/** `n` handles, each depending on the two before it: every chunk of them shares its upstream with the others. */
function ladder(n: number, ran?: string[]): ArtifactStep<unknown>[] {
  const hs: ArtifactStep<unknown>[] = [];
  for (let i = 0; i < n; i++) {
    const deps = hs.slice(Math.max(0, i - 2));
    hs.push(apply({ name: `s${i}`, version: 'v1', inputs: { i, deps, out: OUT }, fn: () => void ran?.push(`s${i}`) }));
  }
  return hs;
}

function reset(): void {
  lowered.start = loweringWork.calls;
}

describe('lowering the caller’s handles', () => {
  it('an array of handles longer than a discovery chunk is lowered in one call', async () => {
    const hs = ladder(3000);
    const store = new MemoryStore();
    reset();
    const s = await new StepRunner({ prefix: '/p', store, logger: quiet }).run(hs, { handleSigint: false });
    expect(s.counts.succeeded).toBe(3000);
    // Per chunk of 1,024 it was 3 calls.
    expect(lowered.calls).toBe(1);
    reset();
    const again = await new StepRunner({ prefix: '/p', store, logger: quiet }).run(ladder(3000), { handleSigint: false });
    expect(again.counts.cached).toBe(3000);
    expect(lowered.calls).toBe(1);
  });

  it('load() and rebuild lower all their handles in one call each', async () => {
    const ran: string[] = [];
    const hs = ladder(50, ran);
    const runner = new StepRunner({ prefix: '/p', store: new MemoryStore(), logger: quiet });
    await runner.run(hs, { handleSigint: false });
    reset();
    const loaded = await runner.load(hs.slice(40), { handleSigint: false });
    expect(loaded).toHaveLength(10);
    expect(lowered.calls).toBe(1); // load()'s: the run is given its specs
    ran.length = 0;
    reset();
    const s = await runner.run(hs, { handleSigint: false, rebuild: hs.slice(45) });
    expect(lowered.calls).toBe(2); // the rebuild selection's, then the run's
    expect(s.counts.succeeded).toBe(5);
    expect(ran).toEqual(['s45', 's46', 's47', 's48', 's49']);
  });

  it('a list mixing specs and handles keeps its order; anything else is a typed error naming the call', () => {
    const hs = ladder(3);
    const [spec] = lowerInputs([hs[0]], {}, 'run()');
    const out = lowerInputs([hs[2], spec, hs[1]], {}, 'run()');
    expect(out.map((s) => s.name)).toEqual(['s2', 's0', 's1']);
    const specsOnly = [spec];
    expect(lowerInputs(specsOnly, {}, 'run()')).toBe(specsOnly);
    let err: unknown;
    try {
      lowerInputs([hs[0], 42], {}, 'load()');
    } catch (e) {
      err = e;
    }
    expect(hasCode(err, 'CAIRN_BAD_DEPENDENCY')).toBe(true);
    expect((err as Error).message).toBe('load(): got number where a step was expected; pass StepSpecs or handles returned by apply().');
  });

  it('a bad item anywhere in an array fails the run before any step runs', async () => {
    const ran: string[] = [];
    const hs = ladder(2000, ran);
    const list: unknown[] = [...hs, null];
    let err: unknown;
    try {
      await new StepRunner({ prefix: '/p', store: new MemoryStore(), logger: quiet }).run(list as ArtifactStep<unknown>[], { handleSigint: false });
    } catch (e) {
      err = e;
    }
    expect(hasCode(err, 'CAIRN_BAD_DEPENDENCY')).toBe(true);
    expect(ran).toEqual([]);
  });
});
