// Forcing: rerun named steps and everything downstream of them, under the same identities.
import { describe, expect, it } from 'vitest';
import { MemoryStore, StepRunner } from '../src/index.js';
import { Graph, memoryLogger, tempDirs } from './helpers/graph.js';

const dir = tempDirs();

// a ← b ← d, a ← c, and e alone: rebuilding b reruns b and d only.
function graph(): Graph {
  return new Graph().step('a').step('b', ['a']).step('c', ['a']).step('d', ['b', 'c']).step('e');
}

describe('rebuild', () => {
  it('reruns exactly the named step and what is downstream of it, found below built targets', async () => {
    const prefix = dir();
    const g = graph();
    const r = new StepRunner({ prefix, logger: memoryLogger() });
    await r.run(g.pick('d', 'e'));
    g.calls.length = 0;
    const plan = await r.plan(g.pick('d', 'e'), { rebuild: ['b'] });
    expect(Object.fromEntries(plan.steps.map((s) => [s.name, s.state]))).toEqual({ a: 'cached', b: 'run', c: 'cached', d: 'run', e: 'cached' });
    const summary = await r.run(g.pick('d', 'e'), { rebuild: ['b'] });
    expect(g.calls.sort()).toEqual(['b', 'd']);
    expect(summary.counts).toEqual({ succeeded: 2, cached: 3 });
    // A rebuild by spec works the same, and the next run serves the new outputs.
    g.calls.length = 0;
    await r.run(g.pick('d'), { rebuild: [g.get('c')] });
    expect(g.calls.sort()).toEqual(['c', 'd']);
    g.calls.length = 0;
    expect((await r.run(g.pick('d', 'e'))).counts).toEqual({ cached: 2 });
    expect(g.calls).toEqual([]);
  });

  it("'all' reruns every requested step and everything upstream", async () => {
    const g = graph();
    const r = new StepRunner({ prefix: '/p', store: new MemoryStore(), logger: memoryLogger() });
    await r.run(g.pick('d'));
    g.calls.length = 0;
    await r.run(g.pick('d'), { rebuild: 'all' });
    expect(g.calls.sort()).toEqual(['a', 'b', 'c', 'd']);
  });

  it('a failed step is rebuilt even when forceRunFailed is false', async () => {
    const g = new Graph().step('x', [], { run: () => {
      throw new Error('broken');
    } });
    const r = new StepRunner({ prefix: '/p', store: new MemoryStore(), logger: memoryLogger() });
    await r.run(g.pick('x')).catch(() => undefined);
    g.on('x', () => 'fixed');
    await r.run(g.pick('x'), { forceRunFailed: false, rebuild: ['x'] });
    expect(g.count('x')).toBe(2);
  });
});
