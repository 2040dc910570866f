import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig, type ViteUserConfig } from 'vitest/config';

const root = fileURLToPath(new URL('.', import.meta.url));

/**
 * The one vitest configuration every package extends. Tests run on TypeScript
 * sources: the `@cairn/source` export condition points workspace packages at
 * `src/index.ts`, so no build is needed before `vitest`. Each project writes a
 * JSON report under `.test-results/` that `tools/scripts/test-summary.mjs` sums.
 */
export function cairnVitest(projectDir: string, overrides: ViteUserConfig['test'] = {}): ViteUserConfig {
  const name = basename(projectDir);
  return defineConfig({
    resolve: { conditions: ['@cairn/source', 'module', 'node', 'import', 'default'] },
    ssr: { resolve: { conditions: ['@cairn/source', 'node', 'import', 'default'], externalConditions: ['@cairn/source'] } },
    test: {
      name,
      root: projectDir,
      include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
      testTimeout: 30_000,
      hookTimeout: 60_000,
      reporters: ['default', 'json'],
      outputFile: { json: `${root}.test-results/${name}.json` },
      ...overrides,
    },
  });
}
