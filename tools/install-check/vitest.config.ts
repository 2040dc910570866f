import { fileURLToPath } from 'node:url';
import { cairnVitest } from '../../vitest.shared.js';

// These tests install, build and run whole projects: long timeouts, one file at a time (2 CPUs),
// and the packages packed once for every file (test/global-setup.ts).
export default cairnVitest(fileURLToPath(new URL('.', import.meta.url)), {
  testTimeout: 600_000,
  hookTimeout: 600_000,
  fileParallelism: false,
  globalSetup: ['./test/global-setup.ts'],
});
