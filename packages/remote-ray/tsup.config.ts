import { fileURLToPath } from 'node:url';
import { defineConfig } from 'tsup';
import { cairnTsup } from '../../tsup.shared.js';

// Entries come from package.json `exports` (see tsup.shared.ts). esbuild (loaded only to bundle
// apply steps for a cluster without the shared filesystem) is never bundled into the package.
export default defineConfig(cairnTsup(fileURLToPath(new URL('.', import.meta.url)), { external: ['esbuild'] }));
