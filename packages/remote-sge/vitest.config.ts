import { fileURLToPath } from 'node:url';
import { cairnVitest } from '../../vitest.shared.js';

// The SGE tests run many jobs at once against one cell: let concurrent tests overlap.
export default cairnVitest(fileURLToPath(new URL('.', import.meta.url)), { maxConcurrency: 20 });
