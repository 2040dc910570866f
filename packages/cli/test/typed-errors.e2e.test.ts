/**
 * Bad pipelines end with a typed error and exit 2 through the BUILT binary, every time: a step
 * whose export is missing, run on `threads`, crashed the CLI with a raw stack and exit 1 (an
 * unhandled rejection while discovery yielded between chunks).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cairn, makeProject } from './helpers/cli.js';

let project: ReturnType<typeof makeProject>;

beforeAll(() => {
  assertBuilt();
  project = makeProject(['missing-export.mjs']);
});
afterAll(() => project?.cleanup());

describe('a missing step export on threads', () => {
  it('is CAIRN_FN_REF and exit 2 on each of 8 runs, never a raw stack', () => {
    for (let i = 0; i < 8; i++) {
      const r = cairn(project.dir, ['run', 'missing-export.mjs', '--prefix', project.prefix]);
      expect(r.stderr).toContain('[CAIRN_FN_REF]');
      expect(r.stderr).toContain('no exported function "notExported"');
      expect(r.stderr).not.toMatch(/^\s+at /m);
      expect(r.code, r.stderr).toBe(2);
    }
  }, 120_000);
});
