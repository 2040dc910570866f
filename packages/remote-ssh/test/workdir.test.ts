import { describe, expect, it } from 'vitest';
import { hasCode } from '@cairn/core';
import { createSshExecutor } from '../src/index.js';
import { judgeWorkDir } from '../src/workdir.js';

/** What WORKDIR_SCRIPT prints for a dir whose mode/owner lines are given (uid 1000 is the login user). */
const out = (dir: string, parents: string[], path = '/home/u/.cache/cairn', target?: string) =>
  ['me 1000', `dir ${dir}`, ...(target ? [`target ${target}`] : []), ...parents.map((p) => `parent ${p}`), '::path::', path].join('\n');
const HOME_PARENTS = ['drwx------ 1000', 'drwxr-xr-x 0', 'drwxr-xr-x 0'];

describe('judgeWorkDir (the decision on the remote ls output)', () => {
  it('accepts the login user\'s 0700 dir under root-owned or sticky parents', () => {
    expect(judgeWorkDir(out('drwx------ 1000', HOME_PARENTS), '~/.cache/cairn')).toEqual({ ok: true, dir: '/home/u/.cache/cairn' });
    expect(judgeWorkDir(out('drwx------. 1000', ['drwxrwxrwt 0', 'drwxr-xr-x 0'], '/tmp/x/'), '/tmp/x')).toEqual({ ok: true, dir: '/tmp/x' });
    expect(judgeWorkDir(out('drwxr-xr-x+ 1000', HOME_PARENTS), 'x')).toMatchObject({ ok: true });
  });

  const refused: [string, string, RegExp][] = [
    ['another owner', out('drwx------ 1001', HOME_PARENTS), /owned by uid 1001, not by the login user \(uid 1000\)/],
    ['world-writable', out('drwxrwxrwx 1000', HOME_PARENTS), /writable by other users \(mode drwxrwxrwx\)/],
    ['group-writable', out('drwxrwx--- 1000', HOME_PARENTS), /writable by its group/],
    ['not a directory', out('-rw------- 1000', HOME_PARENTS), /not a directory/],
    ['a link of another user', out('lrwxrwxrwx 1001', HOME_PARENTS, '/tmp/l', 'drwx------ 1000'), /symbolic link owned by uid 1001/],
    ['a link to another user\'s dir', out('lrwxrwxrwx 1000', HOME_PARENTS, '/tmp/l', 'drwx------ 1001'), /owned by uid 1001/],
    ['a parent of another user', out('drwx------ 1000', ['drwxr-xr-x 1001', 'drwxr-xr-x 0'], '/data/team/wd'), /the directory above it, \/data\/team, is owned by uid 1001/],
    ['a world-writable parent without sticky bit', out('drwx------ 1000', ['drwxrwxrwx 0', 'drwxr-xr-x 0'], '/scratch/wd'), /\/scratch, is writable by other users without the sticky bit/],
    ['an unreadable parent', out('drwx------ 1000', [' '], '/x/wd'), /\/x, could not be checked/],
    ['no home', 'nohome /nonexistent', /no home directory \(HOME=\/nonexistent\)/],
    ['cannot create', 'mkdir', /cannot be created/],
    ['garbage', 'sh: ls: not found', /could not be read/],
  ];
  for (const [what, text, why] of refused) {
    it(`refuses ${what}`, () => {
      const v = judgeWorkDir(text, '~/.cache/cairn');
      expect(v.ok).toBe(false);
      expect((v as { why: string }).why).toMatch(why);
    });
  }

  it('reads a path with spaces and newlines from after the marker only', () => {
    const path = '/home/u/wd dir\nwith "$(id)"';
    expect(judgeWorkDir(out('drwx------ 1000', ['drwx------ 1000', 'drwxr-xr-x 0', 'drwxr-xr-x 0'], path), path)).toEqual({ ok: true, dir: path });
  });
});

describe('SSH executor options', () => {
  const host = { name: 'h', host: '127.0.0.1', user: 'u', privateKey: 'k' };
  it('unknown keys are CAIRN_UNKNOWN_OPTION naming the nearest known one', () => {
    const cases: [unknown, RegExp][] = [
      [{ hosts: [host], pollInterval: 10 }, /^createSshExecutor\(\): unknown option "pollInterval"; did you mean "pollIntervalMs"\?/],
      [{ hosts: [{ ...host, workdir: '/x' }] }, /^createSshExecutor\(\): hosts\[0\] \("h"\): unknown option "workdir"; did you mean "workDir"\?/],
      [{ hosts: [{ ...host, capacity: { gpu: [0] } }] }, /hosts\[0\] \("h"\)\.capacity: unknown option "gpu"; did you mean "gpus"\?/],
    ];
    for (const [options, message] of cases) {
      let err: unknown;
      try {
        createSshExecutor(options as never);
      } catch (e) {
        err = e;
      }
      expect(hasCode(err, 'CAIRN_UNKNOWN_OPTION'), String(err)).toBe(true);
      expect((err as Error).message).toMatch(message);
    }
  });

  it('a workDir neither absolute nor under ~/ is CAIRN_CONFIG', () => {
    for (const workDir of ['rel/dir', '~other/x', 3]) expect(() => createSshExecutor({ hosts: [{ ...host, workDir } as never] })).toThrow(/workDir must be an absolute remote path or one under ~\//);
    expect(() => createSshExecutor({ hosts: [{ ...host, workDir: '~/cairn' }] })).not.toThrow();
  });
});
