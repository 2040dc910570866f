// The example pipeline: corpus -> vocab -> tokens -> model -> eval.
// Convention for `cairn run`: a pipeline file exports its target handles as `targets`.
import { apply, OUT } from '@cairn/core';
import { buildVocab, evaluate, makeCorpus, tokenize, train } from './steps.js';

export const corpus = apply({ name: 'corpus', fn: makeCorpus, version: '2026.11.30', inputs: { docs: 2000, seed: 7, out: OUT } });
export const vocab = apply({ name: 'vocab', fn: buildVocab, version: '2026.11.30', inputs: { corpus, size: 8, out: OUT } });
export const tokens = apply({ name: 'tokens', fn: tokenize, version: '2026.11.30', inputs: { corpus, vocab, out: OUT } });
export const model = apply({ name: 'model', fn: train, version: '2026.11.30', inputs: { tokens, smoothing: 0.5, out: OUT } });
export const evaluation = apply({ name: 'eval', fn: evaluate, version: '2026.11.30', inputs: { model, tokens } });

export const targets = [evaluation];
