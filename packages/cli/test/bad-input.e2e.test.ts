/**
 * Bad input through the BUILT binary (issue 28's "Bad input" list): every usage error prints its
 * `CAIRN_` code and exits 2; a bad config value is `CAIRN_CONFIG`, never a crash.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cairn, makeProject } from './helpers/cli.js';

let project: ReturnType<typeof makeProject>;
let dir: string;

beforeAll(() => {
  assertBuilt();
  project = makeProject(['pipeline.mjs']);
  dir = project.dir;
});
afterAll(() => project?.cleanup());

describe('usage errors', () => {
  it.each([
    [['run']], // missing argument
    [['run', 'pipeline.mjs', '--bogus']], // unknown option
    [['frobnicate']], // unknown command
    [['logs', 'train', '--attempt', 'x']], // invalid argument
  ])('cairn %j prints CAIRN_USAGE and exits 2', (args) => {
    const r = cairn(dir, args);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/^error: .* \[CAIRN_USAGE\]$/m);
  });

  it.each([['0x10'], ['1e3'], [' 4'], ['0b11'], ['4.0'], ['0']])('--max-concurrent %j is refused (it used to read 0x10 as 16)', (n) => {
    const r = cairn(dir, ['run', 'pipeline.mjs', '--prefix', join(dir, 'store'), '--max-concurrent', n]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('CAIRN_USAGE');
    expect(r.stderr).toContain('positive integer');
  });

  it('CAIRN_MAX_CONCURRENT=0x10 is refused as CAIRN_CONFIG', () => {
    const r = cairn(dir, ['config'], { CAIRN_MAX_CONCURRENT: '0x10' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('CAIRN_MAX_CONCURRENT must be a positive integer, got "0x10"');
    expect(r.stderr).toContain('[CAIRN_CONFIG]');
  });
});

describe('config values', () => {
  const cases: [string, string, RegExp][] = [
    ['executors: { x: null }', '{ executors: { x: null } }', /executors\.x must be an object/],
    ['executors: { x: 3 }', '{ executors: { x: 3 } }', /executors\.x must be an object/],
    ['executors: { x: { use: 3 } }', '{ executors: { x: { use: 3 } } }', /executors\.x\.use must be/],
    ['executors: { x: { opts: {} } }', '{ executors: { x: { opts: {} } } }', /executors\.x has an unknown key "opts"/],
    ['leases.pollMs above 2^31-1', '{ leases: { pollMs: 2 ** 31 } }', /leases\.pollMs must be at most 2147483647 ms/],
    ["prefix: ''", "{ prefix: '' }", /prefix "" is empty/],
  ];
  it.each(cases)('%s is a CAIRN_ error with exit 2, not a crash', (_label, value, message) => {
    const cfgDir = mkdtempSync(join(tmpdir(), 'cairn-badcfg-'));
    try {
      writeFileSync(join(cfgDir, 'cairn.config.mjs'), `export default ${value};\n`);
      for (const args of [['run', 'pipeline.mjs'], ['config']]) {
        const r = cairn(dir, [...args, '--config', join(cfgDir, 'cairn.config.mjs')]);
        expect(r.code, r.stderr).toBe(2);
        expect(r.stderr).toMatch(message);
        expect(r.stderr).toMatch(/\[CAIRN_(CONFIG|INVALID_PATH)\]/);
        expect(r.stderr).not.toContain('looks like a bug');
      }
    } finally {
      rmSync(cfgDir, { recursive: true, force: true });
    }
  });
});
