// A Marin pipeline ported to Cairn (docs/from-marin.md shows the Python next to it): an adopted
// public corpus, a tokenizer that saves typed JSON, a model with a kind of its own and a runtime
// argument, and an evaluation that reads the model with ctx.resolved(). Step functions and
// handles live in one module, as in Marin, so a worker (threads, process, ssh, slurm) that
// re-imports a step by module + export finds the handles and their kinds too.
//
//   npx cairn run examples/marin/pipeline.ts --prefix /tmp/marin-store
//   npx cairn explain model examples/marin/pipeline.ts --config --prefix /tmp/marin-store
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { adopt, apply, type ArtifactKind, artifacts, defineStep, OUT, type StepContext } from '@cairn/core';

const VERSION = '2026.11.30';

/** What `tokens` leaves: the vocabulary and each document as token ids (-1: unknown word). */
export interface Tokens {
  readonly vocab: readonly string[];
  readonly docs: readonly (readonly number[])[];
}

/** A unigram model with add-k smoothing. */
export interface Model {
  readonly smoothing: number;
  readonly probabilities: readonly number[];
}

/** The model's artifact kind (Marin: an `Artifact` subclass): saved as model.json, loaded typed. */
export const modelKind: ArtifactKind<Model> = {
  name: 'unigram-model',
  async load(path, ctx) {
    return JSON.parse(await readFile(join(await ctx.local(), 'model.json'), 'utf8')) as Model;
  },
  async save(model, path) {
    await writeFile(join(path, 'model.json'), JSON.stringify(model));
  },
  describe: (model) => `${model.probabilities.length} probabilities, smoothing ${model.smoothing}`,
};

export const tokenize = defineStep(import.meta.url, 'tokenize', async (inputs: { corpus: string; vocab: number }, ctx: StepContext): Promise<Tokens> => {
  const text = await readFile(join(inputs.corpus, 'corpus.txt'), 'utf8');
  const counts = new Map<string, number>();
  for (const w of text.split(/\s+/).filter(Boolean)) counts.set(w, (counts.get(w) ?? 0) + 1);
  const vocab = [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, inputs.vocab).map(([w]) => w);
  const index = new Map(vocab.map((w, i) => [w, i]));
  const docs = text.split('\n').filter(Boolean).map((line) => line.split(' ').map((w) => index.get(w) ?? -1));
  ctx.log.info(`tokenized ${docs.length} documents with a vocabulary of ${vocab.length}`);
  return { vocab, docs }; // saved by artifacts.json as tokens.json
});

export const train = defineStep(import.meta.url, 'train', async (inputs: { tokens: string; smoothing: number; workers: number }, ctx: StepContext): Promise<Model> => {
  const t = await ctx.resolved(tokens); // typed Tokens, loaded once
  ctx.log.info(`training on ${t.docs.length} documents with ${inputs.workers} workers`);
  const counts = new Array<number>(t.vocab.length).fill(0);
  let total = 0;
  for (const doc of t.docs) for (const id of doc) if (id >= 0) ((counts[id] = (counts[id] ?? 0) + 1), total++);
  const k = inputs.smoothing;
  return { smoothing: k, probabilities: counts.map((c) => (c + k) / (total + k * counts.length)) }; // saved by modelKind
});

export const evaluate = defineStep(import.meta.url, 'evaluate', async (inputs: { model: string; tokens: string; out: string }, ctx: StepContext) => {
  const m = await ctx.resolved(model); // typed Model
  const t = await ctx.resolved(tokens);
  let logLik = 0;
  let n = 0;
  for (const doc of t.docs) for (const id of doc) if (id >= 0) ((logLik += Math.log(m.probabilities[id] as number)), n++);
  const perplexity = Math.exp(-logLik / n);
  await mkdir(inputs.out, { recursive: true });
  await writeFile(join(inputs.out, 'report.txt'), `perplexity ${perplexity.toFixed(4)} over ${n} tokens\n`);
  return { perplexity, tokens: n };
});

/** The public corpus, registered where it is: nothing is written into it (Marin: ArtifactStep.adopt). */
export const corpus = adopt({
  name: 'corpus',
  version: VERSION,
  source: process.env.MARIN_EXAMPLE_CORPUS ?? fileURLToPath(new URL('./corpus', import.meta.url)),
  config: { revision: 'r3' },
});

export const tokens = apply({ name: 'tokens', version: VERSION, fn: tokenize, artifact: artifacts.json<Tokens>('tokens.json'), inputs: { corpus, vocab: 8 } });

export const model = apply({
  name: 'model',
  version: VERSION,
  fn: train,
  artifact: modelKind,
  inputs: { tokens, smoothing: 0.5 },
  runtime: { workers: 4 }, // reaches train, never the identity (Marin: runtime_args)
});

export const evaluation = apply({ name: 'eval', version: VERSION, fn: evaluate, inputs: { model, tokens, out: OUT } });

export const targets = [evaluation];
