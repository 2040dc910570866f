import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { apiSlice, type Built } from './slice.js';

const require = createRequire(import.meta.url);

describe('CJS resolution', () => {
  it('require() resolves each package to its dist/index.cjs', () => {
    for (const p of ['core', 'runner', 'remote-ssh']) expect(require.resolve(`@cairn/${p}`)).toMatch(new RegExp(`packages/${p}/dist/index\\.cjs$`));
  });
});

apiSlice('CJS (require)', /packages\/core\/dist\/[^/]+\.cjs$/, async () => ({
  core: require('@cairn/core') as Built['core'],
  runner: require('@cairn/runner') as Built['runner'],
  ssh: require('@cairn/remote-ssh') as Built['ssh'],
}));
