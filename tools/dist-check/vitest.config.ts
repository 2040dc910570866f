import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const root = fileURLToPath(new URL('../../', import.meta.url));

// Deliberately NOT cairnVitest(): no `@cairn/source` condition (nor any other custom one), so
// `@cairn/*` resolve through their `exports` to the built dist/ files, `import` for the ESM tests
// and `require` for the CJS ones, and are loaded by Node itself as external modules.
export default defineConfig({
  test: {
    server: { deps: { external: [/\/packages\/[^/]+\/dist\//, /@cairn\//] } },
    name: 'dist-check',
    root: fileURLToPath(new URL('.', import.meta.url)),
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    reporters: ['default', 'json'],
    outputFile: { json: `${root}.test-results/dist-check.json` },
  },
});
