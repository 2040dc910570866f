import { defineConfig } from 'tsup';

export default defineConfig({
  entry: {
    // For pipeline authors.
    index: 'src/index.ts',
    // For executor plugin authors: the contract, the result codec, log helpers.
    executor: 'src/executor/index.ts',
    // For store plugin authors: the contract and the shared file formats.
    store: 'src/store/kit.ts',
    // The far side of an executor: run a task, format logs, encode the result.
    worker: 'src/worker/index.ts',
    // `node dist/worker-entry.js --task … --result …` (process, SSH and Slurm executors).
    'worker-entry': 'src/worker/entry.ts',
    // The threads executor's pool worker.
    'thread-worker': 'src/worker/thread-worker.ts',
  },
  format: ['esm', 'cjs'],
  dts: { entry: { index: 'src/index.ts', executor: 'src/executor/index.ts', store: 'src/store/kit.ts', worker: 'src/worker/index.ts' } },
  // Gives the CJS build `import.meta.url`, which workerEntryPath() resolves from.
  shims: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
});
