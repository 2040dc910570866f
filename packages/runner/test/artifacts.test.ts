import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { apply, type ArtifactKind, artifacts, type DirArtifact, lower, OUT, type StepContext } from '@cairn/core';
import { describe, expect, it } from 'vitest';
import { type ArtifactRecord, run, StepRunner } from '../src/index.js';
import { consumer, instance, stats } from './fixtures/artifact-steps.mjs';
import { tscOutput } from '../../../tools/testenv/tsc.js';
import { tempDirs } from './helpers/graph.js';
import { runError } from './helpers/thrown.js';

const dir = tempDirs();

function record(path: string): ArtifactRecord {
  return JSON.parse(readFileSync(join(path, '.artifact.json'), 'utf8')) as ArtifactRecord;
}


/** A user kind as a class: a model saved as two files. */
class ModelKind implements ArtifactKind<{ weights: number[]; meta: string }> {
  readonly name = 'model';
  loads = 0;
  load(path: string): { weights: number[]; meta: string } {
    this.loads++;
    return { weights: JSON.parse(readFileSync(join(path, 'weights.json'), 'utf8')) as number[], meta: readFileSync(join(path, 'meta.txt'), 'utf8') };
  }
  save(value: { weights: number[]; meta: string }, path: string): void {
    writeFileSync(join(path, 'weights.json'), JSON.stringify(value.weights));
    writeFileSync(join(path, 'meta.txt'), value.meta);
  }
}

describe('artifact kinds', () => {
  it('run() loads each step by its kind: json, text, dir, a returned value and a class kind', async () => {
    const prefix = dir();
    const counts = apply({ name: 'counts', fn: () => ({ a: 1, b: [2, 3] }), version: 'v1', inputs: {}, artifact: artifacts.json<{ a: number; b: number[] }>() });
    const notes = apply({
      name: 'notes',
      fn: ({ out }: { out: string }) => writeFileSync(join(out, 'data.txt'), 'line one\n'),
      version: 'v1',
      inputs: { out: OUT },
      artifact: artifacts.text(),
    });
    const shards = apply({
      name: 'shards',
      fn: ({ out }: { out: string }) => {
        mkdirSync(join(out, 'part'), { recursive: true });
        writeFileSync(join(out, 'part', 'b.bin'), 'b');
        writeFileSync(join(out, 'a.bin'), 'a');
      },
      version: 'v1',
      inputs: { out: OUT },
      artifact: artifacts.dir,
    });
    const answer = apply({ name: 'answer', fn: () => ({ value: 42 }), version: 'v1', inputs: {}, artifact: artifacts.result });
    const kind = new ModelKind();
    const model = apply({ name: 'model', fn: () => ({ weights: [0.5, 1.5], meta: 'tiny' }), version: 'v1', inputs: {}, artifact: kind });

    const [c, n, s, a, m] = await run(counts, notes, shards, answer, model, { prefix });
    expect(c.value).toEqual({ a: 1, b: [2, 3] });
    expect(readFileSync(join(c.path, 'data.json'), 'utf8')).toBe('{"a":1,"b":[2,3]}\n');
    expect(n.value).toBe('line one\n');
    expect(s.value).toEqual({ path: s.path, files: ['a.bin', 'part/b.bin'] } satisfies DirArtifact);
    expect(a.value.value).toBe(42);
    expect(m.value).toEqual({ weights: [0.5, 1.5], meta: 'tiny' });
    expect(kind.loads).toBe(1);

    // Saved values are not recorded as results; every kind's name is.
    expect(record(c.path).artifact).toBe('json');
    expect(record(c.path).result).toBeUndefined();
    expect(record(m.path)).toMatchObject({ artifact: 'model' });
    expect(record(m.path).result).toBeUndefined();
    expect(record(a.path)).toMatchObject({ artifact: 'result', result: { value: 42 } });

    // Cached: the same values, loaded from the store this time.
    const runner = new StepRunner({ prefix });
    expect((await runner.resolve(counts)).value).toEqual({ a: 1, b: [2, 3] });
    const [again] = await runner.load([model]);
    expect(again.value.meta).toBe('tiny');
    expect(kind.loads).toBe(2);
  });

  it('a kind is not part of the identity: the same step with or without one has one hash', () => {
    const fn = () => 1;
    const plain = lower(apply({ name: 'same', fn, version: 'v1', inputs: { k: 1 } }));
    const typed = lower(apply({ name: 'same', fn, version: 'v1', inputs: { k: 1 }, artifact: artifacts.json() }));
    expect(typed.nameWithHash).toBe(plain.nameWithHash);
    expect(typed.fingerprint).toBe(plain.fingerprint);
  });

  it('ctx.resolved loads a dependency once per step by its kind, and ctx.path gives its path', async () => {
    const prefix = dir();
    const kind = new ModelKind();
    const model = apply({ name: 'm', fn: () => ({ weights: [1, 2, 3], meta: 'x' }), version: 'v1', inputs: {}, artifact: kind });
    const seen: unknown[] = [];
    const evaluate = apply({
      name: 'eval',
      fn: async ({ m }: { m: string }, ctx: StepContext) => {
        const [a, b] = await Promise.all([ctx.resolved(model), ctx.resolved(model)]);
        const c = await ctx.resolved(model);
        seen.push(a === b && b === c, ctx.path(model) === m);
        return { total: a.weights.reduce((x, y) => x + y, 0) };
      },
      version: 'v1',
      inputs: { m: model },
    });
    const [e] = await run(evaluate, { prefix });
    expect(e.value).toEqual({ total: 6 });
    expect(seen).toEqual([true, true]);
    expect(kind.loads).toBe(1);
  });

  it('ctx.resolved of a step that is not a dependency is CAIRN_BAD_DEPENDENCY naming the step', async () => {
    const prefix = dir();
    const other = apply({ name: 'other', fn: () => 1, version: 'v1', inputs: {} });
    const lonely = apply({ name: 'lonely', fn: async (_: object, ctx: StepContext) => ctx.resolved(other), version: 'v1', inputs: {} });
    const err = await runError(run(lonely, { prefix }));
    expect(err.failures[0]?.error).toMatchObject({ code: 'CAIRN_BAD_DEPENDENCY', step: 'lonely' });
    expect(String((err.failures[0]?.error as Error).message)).toContain('ctx.resolved(other@v1)');
  });

  it('ctx.resolved works on worker threads: the re-imported module brings its handles and their kinds', async () => {
    const prefix = dir();
    const [c] = await run(consumer, { prefix });
    expect(c.value).toMatchObject({ sum: 0 + 1 + 4 + 9, samePromiseValue: true, inWorker: true });
    expect(c.value.path).toBe(c.value.input);
    expect(c.value.path).toBe(lower(stats).outputPath(prefix));
  }, 60_000);

  it('a recorded kind that is not the one asked for is CAIRN_ARTIFACT_KIND, loaded directly or as a dependency', async () => {
    const prefix = dir();
    const write = ({ out }: { out: string }) => writeFileSync(join(out, 'data.json'), '"hi"');
    const asJson = apply({ name: 'greeting', fn: write, version: 'v1', inputs: { out: OUT }, artifact: artifacts.json<string>() });
    await run(asJson, { prefix });
    const asText = apply({ name: 'greeting', fn: write, version: 'v1', inputs: { out: OUT }, artifact: artifacts.text('data.json') });
    const err = await new StepRunner({ prefix }).resolve(asText).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'CAIRN_ARTIFACT_KIND', step: 'greeting' });
    expect(String((err as Error).message)).toMatch(/recorded as a "json" artifact, but it is asked for as "text".*rebuild/);

    const user = apply({ name: 'user', fn: async (_: { g: string }, ctx: StepContext) => ctx.resolved(asText), version: 'v1', inputs: { g: asText } });
    const failed = await runError(run(user, { prefix }));
    expect(failed.failures[0]?.error).toMatchObject({ code: 'CAIRN_ARTIFACT_KIND', step: 'greeting' });
  });

  it('a kind without a load function is refused by apply() with the fix', () => {
    expect(() => apply({ name: 'bad', fn: () => 1, version: 'v1', inputs: {}, artifact: { name: 'x' } as never })).toThrow(
      expect.objectContaining({ code: 'CAIRN_INVALID_SPEC', step: 'bad', message: expect.stringContaining('has no load(path, ctx) function') as unknown }),
    );
  });
});

describe('returned values that cannot be recorded', () => {
  class Model {
    constructor(readonly w: number) {}
  }
  const cycle: Record<string, unknown> = { a: 1 };
  cycle.self = cycle;
  const cases: [string, unknown, RegExp][] = [
    ['a function', { model: { fn: () => 1 } }, /result\.model\.fn is a function/],
    ['a class instance', { best: [new Model(1)] }, /result\.best\[0\] is a Model instance/],
    ['a BigInt', { n: 10n }, /result\.n is a BigInt/],
    ['a cycle', cycle, /result\.self refers back/],
    ['a Map', new Map([[1, 2]]), /result is a Map instance/],
    ['NaN', { loss: Number.NaN }, /result\.loss is NaN/],
  ];
  for (const [what, value, message] of cases) {
    it(`${what} fails the step with CAIRN_UNRECORDABLE_RESULT naming the step and the path`, async () => {
      const prefix = dir();
      const step = apply({ name: 'train', fn: () => value, version: 'v1', inputs: {} });
      const err = await runError(run(step, { prefix }));
      const cause = err.failures[0]?.error as Error & { code: string; step: string };
      expect(cause).toMatchObject({ code: 'CAIRN_UNRECORDABLE_RESULT', step: 'train' });
      expect(cause.message).toMatch(message);
      expect(cause.message).toContain('Step "train"');
      // Recorded FAILED, with the error: nothing is served from it later.
      const path = lower(step).outputPath(prefix);
      expect(record(path)).toMatchObject({ status: 'FAILED' });
    });
  }
});

describe('returned values that cannot be recorded, on worker threads', () => {
  it('a class instance is refused in the worker, before structured clone makes it a plain object', async () => {
    const prefix = dir();
    const err = await runError(run(instance, { prefix }));
    const cause = err.failures[0]?.error as Error & { code: string };
    expect(cause.code).toBe('CAIRN_UNRECORDABLE_RESULT');
    expect(cause.message).toContain('result.best is a Checkpoint instance');
  }, 60_000);
});

describe('types', () => {
  it('handles and loaded artifacts are typed by their kind (tsc, strict)', () => {
    const project = fileURLToPath(new URL('./types/tsconfig.json', import.meta.url));
    // tsc exits 0 only when every @ts-expect-error line really is an error.
    expect(tscOutput(project)).toBe('');
  }, 60_000);
});

describe('one step, two kinds', () => {
  it('two handles of one name@version with different kinds, lowered together, are CAIRN_DUPLICATE_STEP', () => {
    const fn = () => 1;
    const a = apply({ name: 'x', fn, version: 'v1', inputs: {}, artifact: artifacts.json() });
    const b = apply({ name: 'x', fn, version: 'v1', inputs: {}, artifact: artifacts.text() });
    const same = apply({ name: 'x', fn, version: 'v1', inputs: {}, artifact: artifacts.json() });
    expect(() => lower([a, b])).toThrow(expect.objectContaining({ code: 'CAIRN_DUPLICATE_STEP', message: expect.stringContaining('different artifact kinds (json and text)') as unknown }));
    expect(lower([a, same]).map((s) => s.nameWithHash)).toHaveLength(2);
  });
});
