import { defineConfig } from 'tsup';

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    // `node dist/pack-worker.js --pack <dir> --task <k>`: runs one task of a packed job on a compute node.
    'pack-worker': 'src/pack-worker.ts',
  },
  format: ['esm', 'cjs'],
  dts: { entry: { index: 'src/index.ts' } },
  // Gives the CJS build `import.meta.url`, which packWorkerPath() resolves from.
  shims: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
});
