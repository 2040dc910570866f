/**
 * What a new user meets in the first hour, as the issue reported it: a failed step's error
 * after the run, error codes that say what went wrong, defaults that agree with the library,
 * `--version`, `cairn config` values, `cairn status` in DAG order, and the README snippet run as
 * a normal user. Runs the BUILT binary.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cairn, makeProject, PACKAGE_DIR, REPO_DIR } from './helpers/cli.js';

let project: ReturnType<typeof makeProject>;
beforeAll(() => {
  assertBuilt();
  project = makeProject(['pipeline.mjs', 'throws.mjs']);
});
afterAll(() => project?.cleanup());

describe("a failed step's error after the run", () => {
  const prefix = () => join(project.dir, 'failed');
  beforeAll(() => {
    const r = cairn(project.dir, ['run', 'throws.mjs', '--prefix', prefix()]);
    expect(r.code).toBe(1);
  });

  it('`cairn logs <step>` of an inline step that threw and logged nothing shows its error and stack', () => {
    const r = cairn(project.dir, ['logs', 'parse', '--prefix', prefix()]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('(attempt 1 wrote no logs)');
    expect(r.stdout).toContain('--- attempt 1 failed on inline');
    expect(r.stdout).toContain('RangeError: row 2: expected 3 columns, got 5');
    expect(r.stdout).toMatch(/\n\s+at .*throws\.mjs:\d+:\d+/);
    const dep = cairn(project.dir, ['logs', 'index', '--prefix', prefix()]);
    expect(dep.code).toBe(0);
    expect(dep.stdout).toMatch(/index\/v1-[0-9a-f]{16} did not run \(DEP_FAILED\)/);
    const none = cairn(project.dir, ['logs', 'parse', '--attempt', '7', '--prefix', prefix()]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/has no logs for attempt 7\..*\[CAIRN_NO_LOGS\]/s);
  });

  it('`cairn status <step>` prints the whole record: attempts, error with stack, config', () => {
    const r = cairn(project.dir, ['status', 'parse', '--prefix', prefix()]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^parse parse-[0-9a-f]{16}\n/);
    expect(r.stdout).toMatch(/status\s+FAILED/);
    expect(r.stdout).toMatch(/#1 failed\s+inline @ /);
    expect(r.stdout).toContain('RangeError: row 2: expected 3 columns, got 5');
    expect(r.stdout).toMatch(/error\n\s+RangeError: row 2.*\n\s+at /);
    const json = JSON.parse(cairn(project.dir, ['status', 'parse', '--json', '--prefix', prefix()]).stdout);
    expect(json).toMatchObject({ status: 'FAILED', record: { name: 'parse', status: 'FAILED', error: { name: 'RangeError' } } });
    expect(json.step).toMatch(/^parse\/v1-[0-9a-f]{16}$/);
  });

  it('`cairn status` lists steps in DAG order, not alphabetically', () => {
    const r = JSON.parse(cairn(project.dir, ['status', '--json', '--prefix', prefix()]).stdout);
    const dirOf = (step: string) => step.replace(/\/v1-[0-9a-f]{16}$/, '');
    expect(r.steps.map((s: { step: string }) => dirOf(s.step))).toEqual(['load', 'parse', 'index']);
    const p = join(project.dir, 'dag');
    expect(cairn(project.dir, ['run', 'pipeline.mjs', '--prefix', p]).code).toBe(0);
    const text = cairn(project.dir, ['status', '--prefix', p]).stdout;
    expect(text.split('\n').slice(1, 4).map((l) => dirOf(l.split(/\s+/)[0] as string))).toEqual(['prepare', 'train', 'evaluate']);
  });
});

describe('error codes, defaults and the version', () => {
  it('names what went wrong in the code of every kind of error', () => {
    const code = (args: string[], env: Record<string, string> = {}) => {
      const r = cairn(project.dir, args, env);
      expect(r.code, r.stderr).toBe(2);
      return /\[(CAIRN_[A-Z_]+)\]\s*$/m.exec(r.stderr)?.[1];
    };
    const store = join(project.dir, 'codes');
    expect(cairn(project.dir, ['run', 'pipeline.mjs', '--prefix', store]).code).toBe(0);
    expect(code(['run', 'nope.mjs', '--prefix', store])).toBe('CAIRN_PIPELINE_LOAD');
    writeFileSync(join(project.dir, 'syntax.mjs'), 'export const targets = [;\n');
    expect(code(['plan', 'syntax.mjs', '--prefix', store])).toBe('CAIRN_PIPELINE_LOAD');
    expect(code(['run', 'pipeline.mjs', 'nosuchstep', '--prefix', store])).toBe('CAIRN_NO_SUCH_STEP');
    expect(code(['logs', 'nosuchstep', '--prefix', store])).toBe('CAIRN_NO_SUCH_STEP');
    expect(code(['status', '--prefix', join(project.dir, 'no-store-here')])).toBe('CAIRN_NO_STORE');
    expect(code(['status'])).toBe('CAIRN_CONFIG'); // no prefix set
    expect(code(['config'], { CAIRN_MAX_CONCURRENT: 'lots' })).toBe('CAIRN_CONFIG');
    expect(code(['graph', 'pipeline.mjs', '--format', 'png'])).toBe('CAIRN_USAGE'); // commander's own usage error (issue 28: it printed no code)
  });

  it('reruns a failed step by default, as the library does (forceRunFailed: true)', () => {
    const p = join(project.dir, 'rerun');
    expect(cairn(project.dir, ['run', 'throws.mjs', '--prefix', p]).code).toBe(1);
    const again = cairn(project.dir, ['run', 'throws.mjs', '--prefix', p]);
    expect(again.code).toBe(1);
    expect(again.stdout).toMatch(/running\s+parse/); // ran again, failed again
    expect(again.stderr).not.toContain('(the default)');
    const refused = cairn(project.dir, ['run', 'throws.mjs', '--prefix', p, '--no-force-run-failed']);
    expect(refused.code).toBe(1);
    expect(refused.stdout).not.toMatch(/running\s+parse/);
    expect(refused.stderr).toContain('failed in an earlier run; not rerun (--no-force-run-failed)');
    const config = JSON.parse(cairn(project.dir, ['config', '--json']).stdout);
    expect(config).toMatchObject({ forceRunFailed: true, sources: { forceRunFailed: 'default' } });
  });

  it('prints effective values, not "runner default", and its version', () => {
    const text = cairn(project.dir, ['config']).stdout;
    expect(text).not.toContain('runner default');
    expect(text).toMatch(/maxConcurrent\s+8 \(default\)/);
    expect(text).toMatch(/executor\s+inline \(default\)/);
    expect(text).toMatch(/forceRunFailed\s+true \(default\)/);
    const version = JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8')).version as string;
    for (const flag of ['--version', '-V']) {
      const r = cairn(project.dir, [flag]);
      expect(r.code).toBe(0);
      expect(r.stdout.trim()).toBe(version);
    }
  });
});

describe('the README', () => {
  it('runs the "pipeline in 20 lines" snippet as a normal user, writing only where it runs', () => {
    const readme = readFileSync(join(REPO_DIR, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## A pipeline in 20 lines'));
    const snippet = /```ts\n([\s\S]*?)```/.exec(section)![1]!;
    expect(snippet).not.toContain("'/data'");
    const dir = mkdtempSync(join(tmpdir(), 'cairn-readme-'));
    const p = makeProject([], { packages: ['core', 'runner'] });
    try {
      // A directory a normal user owns: the snippet's store goes next to it.
      writeFileSync(join(p.dir, 'pipeline.mts'), snippet);
      chmodSync(p.dir, 0o777);
      const asNobody = process.getuid?.() === 0 ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'] : [];
      const tsx = join(REPO_DIR, 'node_modules', 'tsx', 'dist', 'loader.mjs');
      const r = spawnSync(asNobody[0] ?? process.execPath, [...asNobody.slice(1), ...(asNobody.length > 0 ? [process.execPath] : []), '--import', tsx, 'pipeline.mts'], {
        cwd: p.dir,
        encoding: 'utf8',
        env: { PATH: process.env.PATH ?? '', HOME: dir },
        timeout: 60_000,
      });
      expect(r.status, r.stdout + r.stderr).toBe(0);
      const at = /stats-[0-9a-f]{16} \[ '\.\/store\/(raw\/2026\.11\.30-[0-9a-f]{16})' \]/.exec(r.stdout);
      expect(at, r.stdout).not.toBeNull();
      expect(r.stdout).toContain('{ chars: 27 }');
      expect(readFileSync(join(p.dir, 'store', at?.[1] as string, 'data.txt'), 'utf8')).toBe('fetched https://example.org');
    } finally {
      p.cleanup();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
