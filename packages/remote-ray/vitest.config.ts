import { fileURLToPath } from 'node:url';
import { cairnVitest } from '../../vitest.shared.js';

// One Ray cluster per test file, started in beforeAll: it takes ~15 s on a loaded machine.
export default cairnVitest(fileURLToPath(new URL('.', import.meta.url)), { hookTimeout: 120_000, fileParallelism: false });
