// Step functions of the example pipeline. Each is exported and marked with defineStep, so a
// runner can re-import it by module + export on a worker thread, a child process or a host.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { defineStep, type StepContext } from '@cairn/core';

/** Writes a small synthetic corpus: `docs` lines of pseudo-random words. */
export const makeCorpus = defineStep(import.meta.url, 'makeCorpus', async (inputs: { docs: number; seed: number; out: string }) => {
  const words = ['cairn', 'stone', 'trail', 'summit', 'ridge', 'valley', 'river', 'cloud', 'path', 'peak'];
  let state = inputs.seed >>> 0;
  const rand = () => ((state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32);
  const lines: string[] = [];
  for (let d = 0; d < inputs.docs; d++) {
    const n = 5 + Math.floor(rand() * 10);
    lines.push(Array.from({ length: n }, () => words[Math.floor(rand() * words.length)]).join(' '));
  }
  await mkdir(inputs.out, { recursive: true });
  await writeFile(join(inputs.out, 'corpus.txt'), lines.join('\n') + '\n');
  return { docs: lines.length };
});

/** Builds a vocabulary of the `size` most frequent words. */
export const buildVocab = defineStep(import.meta.url, 'buildVocab', async (inputs: { corpus: string; size: number; out: string }) => {
  const text = await readFile(join(inputs.corpus, 'corpus.txt'), 'utf8');
  const counts = new Map<string, number>();
  for (const w of text.split(/\s+/).filter(Boolean)) counts.set(w, (counts.get(w) ?? 0) + 1);
  const vocab = [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, inputs.size).map(([w]) => w);
  await mkdir(inputs.out, { recursive: true });
  await writeFile(join(inputs.out, 'vocab.json'), JSON.stringify(vocab));
  return { size: vocab.length };
});

/** Tokenizes the corpus with the vocabulary (unknown words map to -1). */
export const tokenize = defineStep(import.meta.url, 'tokenize', async (inputs: { corpus: string; vocab: string; out: string }, ctx: StepContext) => {
  const vocab = JSON.parse(await readFile(join(inputs.vocab, 'vocab.json'), 'utf8')) as string[];
  const index = new Map(vocab.map((w, i) => [w, i]));
  const text = await readFile(join(inputs.corpus, 'corpus.txt'), 'utf8');
  const ids = text.split('\n').filter(Boolean).map((line) => line.split(' ').map((w) => index.get(w) ?? -1));
  await mkdir(inputs.out, { recursive: true });
  await writeFile(join(inputs.out, 'tokens.json'), JSON.stringify(ids));
  ctx.log.info(`tokenized ${ids.length} documents`);
  return { documents: ids.length, tokens: ids.reduce((n, d) => n + d.length, 0) };
});

/** "Trains" a unigram model: token frequencies, with add-k smoothing. */
export const train = defineStep(import.meta.url, 'train', async (inputs: { tokens: string; smoothing: number; out: string }) => {
  const ids = JSON.parse(await readFile(join(inputs.tokens, 'tokens.json'), 'utf8')) as number[][];
  const counts = new Map<number, number>();
  let total = 0;
  for (const doc of ids) for (const t of doc) {
    counts.set(t, (counts.get(t) ?? 0) + 1);
    total++;
  }
  const model = Object.fromEntries([...counts].map(([t, c]) => [t, (c + inputs.smoothing) / (total + inputs.smoothing * counts.size)]));
  await mkdir(inputs.out, { recursive: true });
  await writeFile(join(inputs.out, 'model.json'), JSON.stringify(model));
  return { parameters: counts.size };
});

/** Evaluates the model's perplexity on the tokenized corpus. */
export const evaluate = defineStep(import.meta.url, 'evaluate', async (inputs: { model: string; tokens: string }) => {
  const model = JSON.parse(await readFile(join(inputs.model, 'model.json'), 'utf8')) as Record<string, number>;
  const ids = JSON.parse(await readFile(join(inputs.tokens, 'tokens.json'), 'utf8')) as number[][];
  let logp = 0;
  let n = 0;
  for (const doc of ids) for (const t of doc) {
    logp += Math.log(model[t] ?? 1e-9);
    n++;
  }
  return { perplexity: Math.exp(-logp / Math.max(n, 1)) };
});
