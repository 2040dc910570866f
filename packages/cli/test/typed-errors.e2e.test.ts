/**
 * Bad pipelines end with a typed error and exit 2 through the BUILT binary, every time: a step
 * whose export is missing, run on `threads`, crashed the CLI with a raw stack and exit 1 (an
 * unhandled rejection while discovery yielded between chunks); with `--typecheck`, a typo in an
 * input name stops the run with `CAIRN_TYPECHECK` naming it (it reached the step as undefined).
 */
import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cairn, makeProject, REPO_DIR } from './helpers/cli.js';

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

describe('cairn run --typecheck', () => {
  let ts: ReturnType<typeof makeProject>;
  beforeAll(() => {
    ts = makeProject(['typo.ts', 'pipeline-default.ts']);
    // A TypeScript project has Node's types (the clean pipeline imports node:fs).
    mkdirSync(join(ts.dir, 'node_modules', '@types'), { recursive: true });
    symlinkSync(join(REPO_DIR, 'node_modules', '@types', 'node'), join(ts.dir, 'node_modules', '@types', 'node'), 'dir');
  });
  afterAll(() => ts?.cleanup());

  it('a typo in an input name stops the run with CAIRN_TYPECHECK naming it; nothing runs', () => {
    const r = cairn(ts.dir, ['run', 'typo.ts', '--prefix', ts.prefix, '--typecheck']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('[CAIRN_TYPECHECK]');
    expect(r.stderr).toContain("'tokns' does not exist");
    expect(r.stderr).toContain("Did you mean to write 'tokens'?");
    expect(existsSync(ts.prefix)).toBe(false);
    // Without --typecheck the typo reaches the step as undefined (what --typecheck is for).
    const unchecked = cairn(ts.dir, ['run', 'typo.ts', '--prefix', ts.prefix]);
    expect(unchecked.code, unchecked.stderr).toBe(0);
  }, 120_000);

  it('a pipeline that type-checks runs', () => {
    const r = cairn(ts.dir, ['run', 'pipeline-default.ts', '--prefix', ts.prefix, '--typecheck']);
    expect(r.stderr).not.toContain('CAIRN_TYPECHECK');
    expect(r.code, r.stderr).toBe(0);
  }, 120_000);
});
