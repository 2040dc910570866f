import { defineConfig } from 'tsup';

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    // `node dist/worker-entry.js --task … --result …` (process, SSH and Slurm executors).
    'worker-entry': 'src/worker/entry.ts',
    // The threads executor's pool worker.
    'thread-worker': 'src/worker/thread-worker.ts',
  },
  format: ['esm', 'cjs'],
  dts: { entry: { index: 'src/index.ts' } },
  // Gives the CJS build `import.meta.url`, which workerEntryPath() resolves from.
  shims: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
});
