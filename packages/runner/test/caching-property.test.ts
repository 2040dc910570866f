/**
 * Property (issue 16): for random DAGs of content-addressed `apply` steps and a random change of
 * one config field, the steps `run` executes are exactly those `plan` said would run, and exactly
 * the changed step and its descendants among the requested steps' graph.
 */
import { describe, expect, it } from 'vitest';
import { type ArtifactStep, apply, OUT } from '@cairn/core';
import { MemoryStore, StepRunner } from '../src/index.js';
import { mulberry32 as prng } from '../../../tools/testenv/rng.mjs';
import { memoryLogger } from './helpers/graph.js';

interface Shape {
  /** deps[i]: indices < i. */
  readonly deps: number[][];
  /** Each step's config field values. */
  readonly config: number[][];
}

function randomShape(rand: () => number): Shape {
  const n = 4 + Math.floor(rand() * 20);
  const deps: number[][] = [];
  const config: number[][] = [];
  for (let i = 0; i < n; i++) {
    const d = new Set<number>();
    if (i > 0) for (let k = Math.floor(rand() * 3); k > 0; k--) d.add(Math.floor(rand() * i));
    deps.push([...d]);
    config.push(Array.from({ length: 1 + Math.floor(rand() * 3) }, () => Math.floor(rand() * 100)));
  }
  return { deps, config };
}

/** The handles of `shape`; `ran` collects the names of steps whose functions are called. */
function build(shape: Shape, ran: string[]): ArtifactStep<unknown>[] {
  const handles: ArtifactStep<unknown>[] = [];
  shape.deps.forEach((deps, i) => {
    const inputs: Record<string, unknown> = { out: OUT };
    shape.config[i]?.forEach((v, f) => (inputs[`f${f}`] = v));
    deps.forEach((d, k) => (inputs[`d${k}`] = handles[d]));
    handles.push(apply({ name: `s${i}`, version: 'v1', inputs, fn: () => void ran.push(`s${i}`) }));
  });
  return handles;
}

/** The step `changed` and everything downstream of it that the targets reach. */
function expected(shape: Shape, changed: number, targets: readonly number[]): string[] {
  const reach = new Set<number>();
  const stack = [...targets];
  while (stack.length > 0) {
    const i = stack.pop() as number;
    if (reach.has(i)) continue;
    reach.add(i);
    stack.push(...(shape.deps[i] as number[]));
  }
  const affected = new Set<number>([changed]);
  for (let i = changed + 1; i < shape.deps.length; i++) if ((shape.deps[i] as number[]).some((d) => affected.has(d))) affected.add(i);
  return [...affected].filter((i) => reach.has(i)).map((i) => `s${i}`).sort();
}

describe('plan predicts run, and a change rebuilds exactly its descendants', () => {
  for (let seed = 1; seed <= 40; seed++) {
    it(`seed ${seed}`, async () => {
      const rand = prng(seed);
      const shape = randomShape(rand);
      const n = shape.deps.length;
      // Targets: the sinks plus a random extra step or two.
      const used = new Set(shape.deps.flat());
      const targets = [...new Set([...Array.from({ length: n }, (_, i) => i).filter((i) => !used.has(i)), Math.floor(rand() * n)])];
      const r = new StepRunner({ prefix: '/p', store: new MemoryStore(), logger: memoryLogger() });
      const first: string[] = [];
      const before = build(shape, first);
      await r.run(targets.map((t) => before[t] as ArtifactStep<unknown>));

      // Change one field of one step that the targets reach.
      const changed = Math.floor(rand() * n);
      const fields = shape.config[changed] as number[];
      const field = Math.floor(rand() * fields.length);
      const next: Shape = { deps: shape.deps, config: shape.config.map((c, i) => (i === changed ? c.map((v, f) => (f === field ? v + 1 : v)) : c)) };
      const ran: string[] = [];
      const after = build(next, ran);
      const steps = targets.map((t) => after[t] as ArtifactStep<unknown>);
      const plan = await r.plan(steps);
      const predicted = plan.steps.filter((s) => s.state === 'run').map((s) => s.name).sort();
      await r.run(steps);
      const want = expected(next, changed, targets);
      expect(ran.sort()).toEqual(predicted);
      expect(predicted).toEqual(want);
      if (want.includes(`s${changed}`)) {
        const reason = plan.steps.find((s) => s.name === `s${changed}`)?.reason;
        expect(reason).toContain(`f${field}: ${fields[field]} -> ${(fields[field] as number) + 1}`);
      }
      // And a second run of the same graph runs nothing.
      const none: string[] = [];
      await r.run(targets.map((t) => build(next, none)[t] as ArtifactStep<unknown>));
      expect(none).toEqual([]);
    });
  }
});
