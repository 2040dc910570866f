import { defineConfig } from 'tsup';

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    // The persistent worker, bundled again (with its dependencies) and uploaded to hosts at run time.
    'ssh-worker': 'src/runtime/ssh-worker.ts',
  },
  format: ['esm', 'cjs'],
  dts: { entry: { index: 'src/index.ts' } },
  // Gives the CJS build `import.meta.url`, from which the worker entries are found.
  shims: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
  // Loaded at run time (bundling step code); never bundled into this package.
  external: ['esbuild'],
});
