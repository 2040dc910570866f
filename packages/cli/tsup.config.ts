import { fileURLToPath } from 'node:url';
import { defineConfig } from 'tsup';
import { cairnTsup } from '../../tsup.shared.js';

// The library entries come from package.json `exports` (see tsup.shared.ts). `src/bin.ts` is
// what the committed `bin/cairn.js` imports (as `dist/bin.js`; its CJS twin is not packed).
export default defineConfig(
  cairnTsup(fileURLToPath(new URL('.', import.meta.url)), {
    internal: { bin: 'src/bin.ts' },
    // Gives the CJS build `import.meta.url` (module loading resolves tsx from it).
    shims: true,
  }),
);
