import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { apply, OUT } from '@cairn/core';
import { StepRunner } from '../src/index.js';
import { Graph, memoryLogger, tempDirs } from './helpers/graph.js';

const dir = tempDirs();
function snapshot(root: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      out.push(`${p} ${statSync(p).mtimeMs}`);
      if (e.isDirectory()) walk(p);
    }
  };
  walk(root);
  return out.sort();
}
const tokenize = (inputs: { n: number; out: string }) => ({ n: inputs.n, out: inputs.out });

describe('dry run', () => {
  it('writes nothing and classifies each step', async () => {
    const prefix = dir();
    const g = new Graph()
      .step('base')
      .step('mid', ['base'])
      .step('top', ['mid'])
      .step('bad', [], { run: () => { throw new Error('no'); } })
      .step('fresh', ['top']);
    const r = new StepRunner({ prefix, logger: memoryLogger() });
    await r.run(g.pick('top', 'bad')).catch(() => undefined);
    writeFileSync(join(g.get('base').outputPath(prefix), 'marker'), 'x');
    const before = snapshot(prefix);
    const plan = await r.run(g.pick('fresh', 'bad'), { dryRun: true });
    expect(snapshot(prefix)).toEqual(before);
    const state = Object.fromEntries(plan.steps.map((s) => [s.name, s.state]));
    expect(state).toEqual({ base: 'not-examined', mid: 'not-examined', top: 'cached', fresh: 'run', bad: 'failed-before' });
    expect(plan.steps.find((s) => s.name === 'fresh')?.path).toBe(g.get('fresh').outputPath(prefix));
    expect(g.calls.sort()).toEqual(['bad', 'base', 'mid', 'top']);
  });

  it('a config change gives a content-addressed step a new path: planned and run, the old output kept (drift: test/drift.test.ts)', async () => {
    const prefix = dir();
    const logger = memoryLogger();
    const r = new StepRunner({ prefix, logger });
    const v1 = apply({ name: 'tok', version: 'v1', fn: tokenize, inputs: { n: 1, out: OUT } });
    const [first] = await r.load([v1]);
    expect(first?.value).toEqual({ n: 1, out: first?.path });
    const v1b = apply({ name: 'tok', version: 'v1', fn: tokenize, inputs: { n: 2, out: OUT } });
    const plan = await r.plan([v1b]);
    expect(plan.steps[0]?.state).toBe('run');
    const [second] = await r.load([v1b]);
    expect(second?.value).toEqual({ n: 2, out: second?.path });
    expect(second?.path).not.toBe(first?.path);
    expect((await r.plan([v1])).steps[0]?.state).toBe('cached'); // the old output is still there
    expect(logger.lines).toEqual([]);
  });

  it('rebuilds mutable (dev) versions every run', async () => {
    const prefix = dir();
    let runs = 0;
    const h = apply({ name: 'live', version: 'v2-dev', fn: () => ++runs, inputs: {} });
    const r = new StepRunner({ prefix });
    await r.run([h]);
    await r.run([h]);
    expect(runs).toBe(2);
    expect((await r.plan([h])).steps[0]?.state).toBe('run');
  });
});
