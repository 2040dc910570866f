import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Options } from 'tsup';

/**
 * The one tsup configuration every TypeScript package extends. Its public entry points are
 * read from the package's `exports` map, so adding a subpath is one block in `package.json`:
 *
 * ```json
 * "./executor": {
 *   "@cairn/source": "./src/executor.ts",
 *   "import": { "types": "./dist/executor.d.ts", "default": "./dist/executor.js" },
 *   "require": { "types": "./dist/executor.d.cts", "default": "./dist/executor.cjs" }
 * }
 * ```
 *
 * Each block is built as ESM and CommonJS with declarations for both (`.d.ts` beside `.js`,
 * `.d.cts` beside `.cjs`, so TypeScript gives CommonJS consumers CommonJS types). A block that
 * breaks the pattern fails the build with a message naming it; tools/install-check verifies the
 * packed result with @arethetypeswrong/cli.
 */

/** One subpath of an `exports` map, as this repository writes them. */
interface ExportBlock {
  readonly '@cairn/source'?: string;
  readonly import?: { readonly types?: string; readonly default?: string };
  readonly require?: { readonly types?: string; readonly default?: string };
}

/** Options for {@link cairnTsup}. */
export interface CairnTsupOptions {
  /** Entries that are not exported (workers, the bin), built as JS only: name → source. @default {} */
  readonly internal?: Record<string, string>;
  /** Give the CJS build `import.meta.url` (tsup's shim). @default false */
  readonly shims?: boolean;
  /** Modules never bundled. @default [] */
  readonly external?: string[];
}

/** The entries (`dist/<name>` → source) declared by the `exports` map of the package in `dir`. */
export function exportedEntries(dir: string): Record<string, string> {
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name: string; exports: Record<string, unknown> };
  const entries: Record<string, string> = {};
  for (const [subpath, value] of Object.entries(pkg.exports)) {
    if (typeof value === 'string') continue; // "./package.json"
    const block = value as ExportBlock;
    const source = block['@cairn/source'];
    const name = /^\.\/dist\/(.+)\.js$/.exec(block.import?.default ?? '')?.[1];
    const expected = name && {
      import: { types: `./dist/${name}.d.ts`, default: `./dist/${name}.js` },
      require: { types: `./dist/${name}.d.cts`, default: `./dist/${name}.cjs` },
    };
    if (!source || !expected || JSON.stringify({ import: block.import, require: block.require }) !== JSON.stringify(expected)) {
      throw new Error(
        `${pkg.name}: exports["${subpath}"] must be { "@cairn/source": "./src/<file>.ts", ` +
          `"import": ${JSON.stringify(expected ? expected.import : { types: './dist/<name>.d.ts', default: './dist/<name>.js' })}, ` +
          `"require": ${JSON.stringify(expected ? expected.require : { types: './dist/<name>.d.cts', default: './dist/<name>.cjs' })} } (see tsup.shared.ts)`,
      );
    }
    entries[name] = source.replace(/^\.\//, '');
  }
  return entries;
}

/** tsup options for the package in `dir`: its exported entries with declarations, plus `internal` ones. */
export function cairnTsup(dir: string, options: CairnTsupOptions = {}): Options {
  const exported = exportedEntries(dir);
  return {
    entry: { ...exported, ...options.internal },
    format: ['esm', 'cjs'],
    dts: { entry: exported },
    shims: options.shims ?? false,
    sourcemap: true,
    clean: true,
    target: 'node20',
    external: options.external ?? [],
  };
}
