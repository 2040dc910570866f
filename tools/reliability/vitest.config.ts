import { fileURLToPath } from 'node:url';
import { cairnVitest } from '../../vitest.shared.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

// Crash, concurrency and soak tests drive real child processes for minutes: long timeouts, and
// one file at a time so they do not compete for the 2 CPUs of a CI machine.
export default cairnVitest(fileURLToPath(new URL('.', import.meta.url)), {
  testTimeout: 300_000,
  hookTimeout: 120_000,
  fileParallelism: false,
  reporters: ['default', 'json', './reporter.ts'],
  outputFile: { json: `${root}.test-results/reliability.json` },
});
