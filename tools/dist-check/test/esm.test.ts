import { describe, expect, it } from 'vitest';
import { apiSlice } from './slice.js';

describe('ESM resolution', () => {
  it('import resolves each package to its dist/index.js', () => {
    for (const p of ['core', 'runner', 'remote-ssh']) expect(import.meta.resolve(`@cairn/${p}`)).toMatch(new RegExp(`packages/${p}/dist/index\\.js$`));
  });
});

apiSlice('ESM (import)', /packages\/core\/dist\/[^/]+\.js$/, async () => ({
  core: await import('@cairn/core'),
  runner: await import('@cairn/runner'),
  ssh: await import('@cairn/remote-ssh'),
}));
