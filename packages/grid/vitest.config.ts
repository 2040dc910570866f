import { fileURLToPath } from 'node:url';
import { cairnVitest } from '../../vitest.shared.js';

export default cairnVitest(fileURLToPath(new URL('.', import.meta.url)));
