/**
 * The public surfaces as users and plugin authors install them: every declaration file a
 * package's `exports` map publishes (its built `dist/*.d.ts`), except the `./internal` subpaths
 * kept for Cairn's own packages, declares nothing marked `@internal`, and core's main entry
 * no longer carries the runner's hooks (they live in `@cairn/core/internal`).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const packages = fileURLToPath(new URL('../../../packages/', import.meta.url));

/** Each package's published declaration files (ESM and CJS), by subpath. */
function publicDeclarations(): { pkg: string; subpath: string; file: string }[] {
  const out: { pkg: string; subpath: string; file: string }[] = [];
  for (const dir of readdirSync(packages)) {
    const manifest = join(packages, dir, 'package.json');
    if (!existsSync(manifest)) continue;
    const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { name: string; exports?: Record<string, unknown> };
    for (const [subpath, block] of Object.entries(pkg.exports ?? {})) {
      if (typeof block !== 'object' || block === null || subpath.endsWith('/internal')) continue;
      const b = block as { import?: { types?: string }; require?: { types?: string } };
      for (const types of [b.import?.types, b.require?.types]) if (types !== undefined && types.startsWith('./dist/')) out.push({ pkg: pkg.name, subpath, file: join(packages, dir, types) });
    }
  }
  return out;
}

describe('public declaration files', () => {
  const files = publicDeclarations();

  it('are built for every TypeScript package', () => {
    expect(files.length).toBeGreaterThan(20);
    const missing = files.filter((f) => !existsSync(f.file)).map((f) => `${f.pkg} ${f.subpath}: ${f.file}`);
    expect(missing, 'build first: npx nx run-many -t build').toEqual([]);
  });

  it('declare nothing marked @internal', () => {
    const marked = files.filter((f) => readFileSync(f.file, 'utf8').includes('@internal')).map((f) => `${f.pkg} ${f.subpath}`);
    expect(marked).toEqual([]);
  });

  it("core's main entry leaves the runner's hooks to @cairn/core/internal", () => {
    const core = readFileSync(join(packages, 'core', 'dist', 'index.d.ts'), 'utf8');
    for (const name of ['registerCommandRunner', 'revealSecrets', 'SECRET_VALUES', 'taggedSecretName', 'LoweringSession']) expect(core, name).not.toMatch(new RegExp(`\\b${name}\\b`));
    const internal = readFileSync(join(packages, 'core', 'dist', 'internal.d.ts'), 'utf8');
    for (const name of ['registerCommandRunner', 'revealSecrets', 'SECRET_VALUES', 'taggedSecretName']) expect(internal, name).toMatch(new RegExp(`\\b${name}\\b`));
  });
});
