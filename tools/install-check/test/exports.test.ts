/**
 * Types for every consumer: each package's `exports` gives ESM declarations (`.d.ts`) to
 * `import` and CommonJS ones (`.d.cts`) to `require`, for every subpath it declares, checked on
 * the packed tarballs by @arethetypeswrong/cli (which reads the subpaths from `exports`).
 */
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { PACKAGE_DIRS, manifest } from './helpers/packages.js';
import { repoRoot, sh, show } from './helpers/sh.js';

const attw = join(repoRoot, 'node_modules', '.bin', 'attw');
const packed = inject('packed');

describe.each(PACKAGE_DIRS.map((dir) => ({ dir, name: manifest(dir).name })))('$name', ({ dir, name }) => {
  const tarball = () => {
    const p = packed.find((x) => x.name === name);
    if (!p) throw new Error(`${name} was not packed`);
    return p.tarball;
  };

  it('every export subpath resolves to matching types under node16 (CJS and ESM) and bundlers', () => {
    const r = sh(`${attw} ${tarball()} --profile node16 --format ascii --no-color --no-emoji`, repoRoot);
    expect(r.status, show(r)).toBe(0);
  });

  it('the root entry also resolves under node10 (main/types for old TypeScript settings)', () => {
    const r = sh(`${attw} ${tarball()} --entrypoints . --format ascii --no-color --no-emoji`, repoRoot);
    expect(r.status, show(r)).toBe(0);
  });

  it.skipIf(dir === 'native')('each subpath is one block: source, then import and require, each with its own types', () => {
    const { exports = {}, main, module, types } = manifest(dir) as ReturnType<typeof manifest> & { module?: string };
    for (const [subpath, block] of Object.entries(exports)) {
      if (subpath === './package.json') continue;
      const b = block as Record<string, { types: string; default: string }>;
      const base = b.import!.default.replace(/\.js$/, '');
      expect(Object.keys(b), subpath).toEqual(['@cairn/source', 'import', 'require']);
      expect(b.import, subpath).toEqual({ types: `${base}.d.ts`, default: `${base}.js` });
      expect(b.require, subpath).toEqual({ types: `${base}.d.cts`, default: `${base}.cjs` });
    }
    expect({ main, module, types }).toEqual({ main: './dist/index.cjs', module: './dist/index.js', types: './dist/index.d.cts' });
  });
});
