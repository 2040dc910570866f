/**
 * What a registry page and a consumer's node_modules show: complete metadata, the licence text,
 * a README per package, and messages that point at documentation a consumer has.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { PACKAGE_DIRS, manifest } from './helpers/packages.js';
import { repoRoot } from './helpers/sh.js';

const packed = inject('packed');
const root = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { repository: { url: string }; bugs: { url: string } };
const license = readFileSync(join(repoRoot, 'LICENSE'), 'utf8');

/** Files of a tarball, `package/` stripped, with their text for the small text files. */
function tarball(path: string): Map<string, string> {
  const list = spawnSync('tar', ['-tzf', path], { encoding: 'utf8' });
  const files = new Map<string, string>();
  for (const entry of list.stdout.split('\n').filter(Boolean)) {
    const name = entry.replace(/^package\//, '');
    const text = /\.(js|cjs|json|md|d\.ts|d\.cts)$/.test(name) || name === 'LICENSE' ? spawnSync('tar', ['-xzOf', path, entry], { encoding: 'utf8', maxBuffer: 64 << 20 }).stdout : '';
    files.set(name, text);
  }
  return files;
}

describe.each(packed.map((p) => ({ ...p, label: p.name })))('$label as packed', ({ name, tarball: path }) => {
  const files = tarball(path);
  const m = JSON.parse(files.get('package.json') ?? '{}') as ReturnType<typeof manifest>;
  const dir = name.startsWith('@cairn/native') ? 'packages/native' : `packages/${name.replace('@cairn/', '')}`;

  it('has name, description, Apache-2.0, repository, homepage, bugs and engines', () => {
    expect(m.description?.length).toBeGreaterThan(20);
    expect(m.license).toBe('Apache-2.0');
    expect(m.repository).toEqual({ type: 'git', url: root.repository.url, directory: dir });
    expect(m.homepage).toMatch(/^https:\/\/\S+#readme$/);
    expect(m.bugs).toEqual({ url: root.bugs.url });
    expect(m.engines).toEqual({ node: '>=20.17' });
  });

  it('ships the licence text and a README', () => {
    expect(files.get('LICENSE')).toBe(license);
    expect(files.get('README.md')?.split('\n')[0]).toMatch(new RegExp(`^# ${name.replace('/', '\\/')}( |$)`));
  });

  it('has no lifecycle script a consumer’s install would run', () => {
    for (const hook of ['preinstall', 'install', 'postinstall', 'prepare']) expect(m.scripts?.[hook], hook).toBeUndefined();
  });

  it('points a consumer at URLs, not at paths of the repository they do not have', () => {
    for (const [file, text] of files) {
      if (!/\.(c?js)$/.test(file) || file.startsWith('src/')) continue;
      const paths = [...text.matchAll(/(?<![\w/.-])(?:packages|docs|tools)\/[\w./-]+\.(?:md|mjs|ts)\b/g)].map((x) => x[0]);
      expect(paths, file).toEqual([]);
    }
  });
});

describe('the repository', () => {
  it('keeps one copy of the licence per package, identical to LICENSE', () => {
    for (const dir of PACKAGE_DIRS) expect(readFileSync(join(repoRoot, 'packages', dir, 'LICENSE'), 'utf8'), dir).toBe(license);
  });

  it('packs every package, and this machine’s native platform package', () => {
    expect(packed.map((p) => p.name).sort()).toEqual(expect.arrayContaining(PACKAGE_DIRS.map((d) => manifest(d).name)));
    expect(packed.some((p) => p.name.startsWith('@cairn/native-'))).toBe(true);
  });
});
