import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig, type ViteUserConfig } from 'vitest/config';
import RetryReporter from './tools/scripts/retry-reporter.js';

const root = fileURLToPath(new URL('.', import.meta.url));

/**
 * The one vitest configuration every package extends. Tests run on TypeScript
 * sources: the `@cairn/source` export condition points workspace packages at
 * `src/index.ts`, so no build is needed before `vitest`. Each project writes a
 * JSON report under `.test-results/` that `tools/scripts/test-summary.mjs` sums.
 *
 * In CI (`CI` set) a failed test is retried once: the suites drive real daemons on a small shared
 * machine. Every retried test is written to `.test-results/{name}.retried.log` and listed by the
 * summary, so a flaky test stays visible (tools/scripts/retry-reporter.ts).
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
      retry: process.env.CI ? 1 : 0,
      reporters: ['default', 'json', new RetryReporter(`${root}.test-results/${name}.retried.log`)],
      outputFile: { json: `${root}.test-results/${name}.json` },
      ...overrides,
    },
  });
}
