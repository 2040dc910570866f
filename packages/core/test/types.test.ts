import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

describe('types', () => {
  it('apply() turns input typos and wrong types into compile errors', () => {
    const project = fileURLToPath(new URL('./types/tsconfig.json', import.meta.url));
    let out = '';
    try {
      out = execFileSync(process.execPath, [tsc, '-p', project], { encoding: 'utf8' });
    } catch (e) {
      out = String((e as { stdout?: string }).stdout);
    }
    // tsc exits 0 only when every @ts-expect-error line really is an error.
    expect(out).toBe('');
  }, 60_000);
});
