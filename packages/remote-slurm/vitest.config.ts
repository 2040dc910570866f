import { fileURLToPath } from 'node:url';
import { cairnVitest } from '../../vitest.shared.js';

// The Slurm tests run many jobs at once against one cluster: let concurrent tests overlap.
export default cairnVitest(fileURLToPath(new URL('.', import.meta.url)), { maxConcurrency: 20 });
