// Compiled by test/artifacts.test.ts with tsc (strict, noUncheckedIndexedAccess): each
// expected error below must really be one.
import { adopt, apply, type ArtifactStep, artifacts, type DirArtifact, OUT, type StepContext } from '@cairn/core';
import { run, StepRunner } from '../../src/index.js';

interface Stats {
  rows: number;
}
class Model {
  constructor(readonly weights: number[]) {}
}
const modelKind = { name: 'model', load: async (path: string): Promise<Model> => new Model([path.length]) };

const stats = apply({ name: 'stats', fn: () => ({ rows: 3 }), version: 'v1', inputs: {}, artifact: artifacts.json<Stats>() });
const notes = apply({ name: 'notes', fn: (_: { out: string }) => undefined, version: 'v1', inputs: { out: OUT }, artifact: artifacts.text() });
const model = apply({ name: 'model', fn: () => undefined, version: 'v1', inputs: {}, artifact: modelKind });
const answer = apply({ name: 'answer', fn: async () => ({ value: 42 }), version: 'v1', inputs: {}, artifact: artifacts.result });
const plain = apply({ name: 'plain', fn: () => ({ ok: true }), version: 'v1', inputs: {} });
const corpus = adopt({ name: 'corpus', version: '2024.07', source: '/data/corpus' });
const tokens = adopt({ name: 'tokens', version: 'v1', source: '/data/tokens', kind: artifacts.json<number[]>() });

// The handle's type follows the kind.
const s: ArtifactStep<Stats> = stats;
const m: ArtifactStep<Model> = model;
const c: ArtifactStep<DirArtifact> = corpus;
const t: ArtifactStep<number[]> = tokens;
void s, m, c, t;

export async function main(): Promise<void> {
  // run(): a tuple of loaded artifacts; no "possibly undefined" value under strict settings.
  const [a, b, mo, ans, p] = await run(stats, notes, model, answer, plain);
  const rows: number = a.value.rows;
  const text: string = b.value;
  const weights: number[] = mo.value.weights;
  const v: number = ans.value.value;
  const ok: boolean = p.value.ok;
  void rows, text, weights, v, ok;

  // @ts-expect-error a json<Stats> artifact has no field "cols"
  void a.value.cols;
  // @ts-expect-error a text artifact is a string, not a number
  const n: number = b.value;
  void n;

  const runner = new StepRunner();
  const resolved = await runner.resolve(model);
  const w: number[] = resolved.value.weights;
  const [loaded] = await runner.load([corpus] as const);
  const files: readonly string[] = loaded.value.files;
  void w, files;
  // @ts-expect-error resolve() of a Model artifact is not a Stats
  const wrong: Stats = (await runner.resolve(model)).value;
  void wrong;
}

// ctx.resolved(dep) is typed by the dependency's kind.
export const user = apply({
  name: 'user',
  fn: async (_: { s: string }, ctx: StepContext) => {
    const st = await ctx.resolved(stats);
    const r: number = st.rows;
    // @ts-expect-error rows is a number
    const bad: string = st.rows;
    const where: string = ctx.path(stats);
    void r, bad, where;
    return r;
  },
  version: 'v1',
  inputs: { s: stats },
});

// @ts-expect-error adopt() needs a source
adopt({ name: 'x', version: 'v1' });
