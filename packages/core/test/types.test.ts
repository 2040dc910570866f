import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tscOutput } from '../../../tools/testenv/tsc.js';

describe('types', () => {
  it('apply() turns input typos and wrong types into compile errors', () => {
    const project = fileURLToPath(new URL('./types/tsconfig.json', import.meta.url));
    // tsc exits 0 only when every @ts-expect-error line really is an error.
    expect(tscOutput(project)).toBe('');
  }, 60_000);
});
