import { fileURLToPath } from 'node:url';
import { defineConfig } from 'tsup';
import { cairnTsup } from '../../tsup.shared.js';

// Public entries come from package.json `exports` (see tsup.shared.ts).
export default defineConfig(
  cairnTsup(fileURLToPath(new URL('.', import.meta.url)), {
    internal: {
      // `node dist/worker-entry.js --task … --result …` (process, SSH and Slurm executors).
      'worker-entry': 'src/worker/entry.ts',
      // The threads executor's pool worker.
      'thread-worker': 'src/worker/thread-worker.ts',
      // What the threads executor's pool runs: the pool worker, with the processes it starts marked.
      'thread-job': 'src/executors/thread-job.ts',
    },
    // Gives the CJS build `import.meta.url`, which workerEntryPath() resolves from.
    shims: true,
  }),
);
