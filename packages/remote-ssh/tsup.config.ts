import { fileURLToPath } from 'node:url';
import { defineConfig } from 'tsup';
import { cairnTsup } from '../../tsup.shared.js';

// Public entries come from package.json `exports` (see tsup.shared.ts).
export default defineConfig(
  cairnTsup(fileURLToPath(new URL('.', import.meta.url)), {
    // The persistent worker, bundled again (with its dependencies) and uploaded to hosts at run time.
    internal: { 'ssh-worker': 'src/runtime/ssh-worker.ts' },
    // Gives the CJS build `import.meta.url`, from which the worker entries are found.
    shims: true,
    // Loaded at run time (bundling step code); never bundled into this package.
    external: ['esbuild'],
  }),
);
