import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { apply, checkLocation, lower, OUT, resolvePrefix, StepSpec } from '../src/index.js';
import { thrown } from './helpers/thrown.js';

const fn = () => 1;
const at = (pin: unknown) => apply({ name: 'p', version: 'v1', fn, inputs: { out: OUT }, pin } as never);

describe('pins and overrideOutputPath stay inside the prefix', () => {
  // The repros of issue 18: each of these wrote outside the prefix, or into the prefix itself.
  const escapes: [string, RegExp][] = [
    ['../../escape-pin', /leaves the prefix/],
    ['a/../../../x', /leaves the prefix \(it normalises to "\.\.\/\.\.\/x"\)/],
    ['..', /leaves the prefix/],
    ['./../x', /leaves the prefix/],
    ['.', /is the prefix itself/],
    ['./', /is the prefix itself/],
    ['a/..', /is the prefix itself/],
    ['', /is empty/],
    ['  ', /is empty/],
    ['a/.cairn/logs', /reserved for Cairn's own files/],
    ['.cairn', /reserved/],
    ['~/data', /does not expand/],
    ['~bob/data', /does not expand/], // issue 28: a pin starting with ~user was accepted
    ['~', /does not expand/],
    ['a\0b', /control character/],
    ['a\nb', /control character/],
  ];
  for (const [pin, message] of escapes) {
    it(`refuses pin ${JSON.stringify(pin)} with CAIRN_INVALID_PATH naming the step`, () => {
      const err = thrown(() => at(pin));
      expect(err.code).toBe('CAIRN_INVALID_PATH');
      expect(err.step).toBe('p');
      expect(err.message).toMatch(/^Step "p": pin /);
      expect(err.message).toMatch(message);
      const spec = thrown(() => new StepSpec({ name: 's', overrideOutputPath: pin }));
      expect(spec.code).toBe('CAIRN_INVALID_PATH');
      expect(spec.message).toMatch(/^Step "s": overrideOutputPath /);
    });
  }

  it('refuses a pin that is not a string', () => {
    for (const pin of [1, null, {}, ['a']]) expect(thrown(() => at(pin)).code).toBe('CAIRN_INVALID_PATH');
  });

  it('normalises relative pins, so one directory has one spelling', () => {
    expect(at('./out//tokens/').pin).toBe('out/tokens');
    expect(at('a/./b/../c').pin).toBe('a/c');
    expect(lower(at('x/./y')).outputPath('/store')).toBe('/store/x/y');
    expect(new StepSpec({ name: 's', overrideOutputPath: 'o//p/' }).outputPath('/store/')).toBe('/store/o/p');
  });

  it('keeps absolute paths and URLs: the user chose them explicitly', () => {
    expect(at('/data/shared/tokens').pin).toBe('/data/shared/tokens');
    expect(at('/data//x/../y/').pin).toBe('/data/y');
    expect(at('s3://bucket/a/../b').pin).toBe('s3://bucket/a/../b');
    expect(lower(at('/abs/out')).outputPath('/store')).toBe('/abs/out');
    expect(checkLocation('pin', '/', 'p')).toBe('/');
  });
});

describe('resolvePrefix', () => {
  it("refuses '' (it made the working directory the store)", () => {
    for (const p of ['', '   ']) {
      const err = thrown(() => resolvePrefix(p));
      expect(err.code).toBe('CAIRN_INVALID_PATH');
      expect(err.message).toMatch(/^prefix "\s*" is empty, which would make the working directory the store/);
    }
    expect(thrown(() => resolvePrefix('', 'CAIRN_PREFIX')).message).toMatch(/^CAIRN_PREFIX "" is empty/);
  });

  it('expands ~ and ~/… to the home directory (it used to create a literal ./~ directory)', () => {
    expect(resolvePrefix('~')).toBe(homedir());
    expect(resolvePrefix('~/x')).toBe(resolve(homedir(), 'x'));
    expect(resolvePrefix('~/x/../y')).toBe(resolve(homedir(), 'y'));
    expect(thrown(() => resolvePrefix('~bob/x')).message).toMatch(/does not expand/);
  });

  it('makes relative paths absolute and keeps URLs', () => {
    expect(resolvePrefix('./.cairn')).toBe(resolve('.cairn'));
    expect(resolvePrefix('/data/cairn/')).toBe('/data/cairn');
    expect(resolvePrefix('s3://bucket/cairn/')).toBe('s3://bucket/cairn/');
    expect(resolvePrefix('file:///data/cairn')).toBe('file:///data/cairn');
  });

  it('resolves a relative path against the base given (a config file\'s directory), ~ still from home', () => {
    expect(resolvePrefix('store', 'prefix', '/etc/project')).toBe('/etc/project/store');
    expect(resolvePrefix('~/store', 'prefix', '/etc/project')).toBe(resolve(homedir(), 'store'));
  });

  it('refuses a prefix under /proc or /sys (a store there never returned), also through a link', () => {
    for (const p of ['/proc', '/proc/x', '/sys/fs/x', 'file:///proc/x', '/a/../proc/1']) {
      const err = thrown(() => resolvePrefix(p, '--prefix'));
      expect(err.code, p).toBe('CAIRN_INVALID_PATH');
      expect(err.message).toMatch(/is under \/(proc|sys), a kernel pseudo-filesystem/);
    }
    // /dev/fd is a link into /proc/self/fd on Linux.
    if (existsSync('/dev/fd')) expect(thrown(() => resolvePrefix('/dev/fd/store')).message).toMatch(/under \/proc/);
    expect(resolvePrefix('/procedures/x')).toBe('/procedures/x');
    expect(resolvePrefix('/system')).toBe('/system');
  });

  it('refuses non-strings and control characters', () => {
    for (const p of [undefined, 3, null, 'a\0b', 'x\u0085']) expect(thrown(() => resolvePrefix(p)).code).toBe('CAIRN_INVALID_PATH');
  });
});

describe('names', () => {
  it('refuses "." as "the directory itself", not as "contains .."', () => {
    const err = thrown(() => apply({ name: '.', version: 'v1', fn, inputs: {} }));
    expect(err.code).toBe('CAIRN_INVALID_NAME');
    expect(err.message).toMatch(/"\." means the directory itself/);
    expect(err.message).not.toMatch(/contains "\.\."/);
    expect(thrown(() => apply({ name: 'a', version: '.', fn, inputs: {} })).message).toMatch(/invalid version "\.": "\." means the directory itself/);
  });

  it('refuses ".cairn" as a name or version (the run journal lives at {prefix}/.cairn/runs)', () => {
    for (const make of [() => apply({ name: '.cairn', version: 'runs', fn, inputs: {} }), () => apply({ name: 'a', version: '.cairn', fn, inputs: {} }), () => new StepSpec({ name: '.cairn' })]) {
      const err = thrown(make);
      expect(err.code).toBe('CAIRN_INVALID_NAME');
      expect(err.message).toMatch(/"\.cairn" is reserved for Cairn's own files/);
    }
    expect(apply({ name: '.hidden', version: 'v1', fn, inputs: {} }).name).toBe('.hidden');
  });
});
