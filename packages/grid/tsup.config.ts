import { fileURLToPath } from 'node:url';
import { defineConfig } from 'tsup';
import { cairnTsup } from '../../tsup.shared.js';

// Public entries come from package.json `exports` (see tsup.shared.ts).
export default defineConfig(
  cairnTsup(fileURLToPath(new URL('.', import.meta.url)), {
    internal: {
      // `node dist/pack-worker.js --pack <dir> --task <k>`: runs one task of a packed job on a compute node.
      'pack-worker': 'src/pack-worker.ts',
    },
    // Gives the CJS build `import.meta.url`, which packWorkerPath() resolves from.
    shims: true,
  }),
);
