// An ML pipeline of Python programs: corpus -> tokenize -> train -> eval, each a command step.
// Editing tokenize.py rebuilds tokenize, train and eval; editing eval.py rebuilds eval only.
// Run it: npx cairn run examples/ml/pipeline.ts --prefix ./store
import { command, input, OUT } from '@cairn/core';

const dir = import.meta.dirname; // sources and the programs' working directory
// The helper (python/cairn_step) from this repository; in your project: pip install ./python.
const env = { PYTHONPATH: '../../python' };

export const corpus = command({
  name: 'corpus', version: 'v1', program: 'python3', dir, env, sources: ['corpus.py'],
  args: ['corpus.py', '--docs', input('docs'), '--seed', input('seed'), '--out', OUT],
  inputs: { docs: 400, seed: 7 },
});

export const tokens = command({
  name: 'tokenize', version: 'v1', program: 'python3', dir, env, sources: ['tokenize.py'],
  args: ['tokenize.py', '--corpus', input('corpus'), '--vocab', input('vocab'), '--out', OUT],
  inputs: { corpus, vocab: 24 },
});

// Resumes from its checkpoint directory ($CAIRN_CHECKPOINT_DIR) after a crash, a kill or a
// preemption; TRAIN_EPOCH_SECONDS slows it down to watch that (a runtime value: not identity).
export const model = command({
  name: 'train', version: 'v1', program: 'python3', dir, env, sources: ['train.py'],
  args: ['train.py', '--tokens', input('tokens'), '--epochs', input('epochs'), '--out', OUT],
  inputs: { tokens, epochs: 3 },
  runtime: { epochSeconds: Number(process.env.TRAIN_EPOCH_SECONDS ?? 0) },
});

export const evaluation = command({
  name: 'eval', version: 'v1', program: 'python3', dir, env, sources: ['eval.py'],
  args: ['eval.py', '--model', input('model'), '--tokens', input('tokens')],
  inputs: { model, tokens },
});

export const targets = [evaluation];
