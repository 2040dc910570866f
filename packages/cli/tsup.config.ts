import { defineConfig } from 'tsup';

// One build for both entries: `src/bin.ts` starts with a hashbang, which esbuild keeps and
// tsup turns into an executable `dist/bin.js`. Only the library entry gets declarations.
export default defineConfig({
  entry: { index: 'src/index.ts', bin: 'src/bin.ts' },
  format: ['esm', 'cjs'],
  dts: { entry: { index: 'src/index.ts' } },
  shims: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
});
