import { fileURLToPath } from 'node:url';
import { defineConfig } from 'tsup';
import { cairnTsup } from '../../tsup.shared.js';

// Entries come from package.json `exports` (see tsup.shared.ts).
export default defineConfig(cairnTsup(fileURLToPath(new URL('.', import.meta.url))));
