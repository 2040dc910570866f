import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tscOutput } from '../../../tools/testenv/tsc.js';

describe('types', () => {
  it('apply() turns input typos and wrong types into compile errors', () => {
    const project = fileURLToPath(new URL('./types/tsconfig.json', import.meta.url));
    // tsc exits 0 only when every @ts-expect-error line really is an error.
    expect(tscOutput(project)).toBe('');
  }, 60_000);

  it('a typo in an input name is a compile error that names it', () => {
    const project = fileURLToPath(new URL('./types/named/tsconfig.json', import.meta.url));
    const output = tscOutput(project);
    expect(output).toContain("'tokns' does not exist in type");
    expect(output).not.toContain("'runtime' is missing");
  }, 60_000);
});
