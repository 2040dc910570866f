/**
 * Step code for a node that has Node.js but not the runner's files: a module bundled with esbuild
 * (bundle, platform node, ESM, node20) into one self-contained file, cached per module for the
 * bundler's lifetime. Native addons (`*.node`) stay external: packages that load them optionally
 * (msgpackr, @cairn/native) fall back to JavaScript.
 *
 * esbuild is the caller's dependency, not the runner's: an executor that deploys code (SSH, Ray
 * without a shared filesystem) passes its own `import('esbuild')`.
 */
import { createHash } from 'node:crypto';
import { isAbsolute } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CairnError } from '@cairn/core';

/** One self-contained ES module. */
export interface CodeBundle {
  /** 16 hex digits of the SHA-256 of `bytes`: names the place it goes. */
  readonly hash: string;
  /** The whole SHA-256 of `bytes` (hex): what the far side may check before it runs the file. */
  readonly sha256: string;
  /** Its file name (`step.mjs`, `worker-entry.mjs`). */
  readonly fileName: string;
  /** The bundled code. */
  readonly bytes: Uint8Array;
}

/** The part of esbuild's API the bundler uses. */
export interface EsbuildApi {
  /** esbuild's `build`. */
  build(options: Record<string, unknown>): Promise<{ outputFiles?: ReadonlyArray<{ contents: Uint8Array }> }>;
}

// ESM output has no `require`, `__filename` or `__dirname`; bundled CommonJS dependencies need them.
const BANNER = [
  "import { createRequire as __cairnCreateRequire } from 'node:module';",
  "import { fileURLToPath as __cairnFileURLToPath } from 'node:url';",
  "import { dirname as __cairnDirname } from 'node:path';",
  'const require = __cairnCreateRequire(import.meta.url);',
  'const __filename = __cairnFileURLToPath(import.meta.url);',
  'const __dirname = __cairnDirname(__filename);',
].join('\n');

/** Bundles modules into one file each (see the module comment). */
export class Bundler {
  readonly #cache = new Map<string, Promise<CodeBundle>>();
  readonly #esbuild: () => Promise<EsbuildApi>;

  /** @param esbuild loads esbuild (the caller's `() => import('esbuild')`). */
  constructor(esbuild: () => Promise<EsbuildApi>) {
    this.#esbuild = esbuild;
  }

  /** Bundles `module` (a `file://` URL, an absolute path or a bare package specifier). */
  bundle(module: string, fileName: string): Promise<CodeBundle> {
    const key = `${module}\0${fileName}`;
    let p = this.#cache.get(key);
    if (!p) {
      p = this.#build(module, fileName);
      this.#cache.set(key, p);
      p.catch(() => this.#cache.delete(key));
    }
    return p;
  }

  async #build(module: string, fileName: string): Promise<CodeBundle> {
    const esbuild = await this.#esbuild();
    const path = module.startsWith('file://') ? fileURLToPath(module) : module;
    const entry = isAbsolute(path) ? { entryPoints: [path] } : { stdin: { contents: `export * from ${JSON.stringify(path)};`, resolveDir: process.cwd(), loader: 'js' as const } };
    let result;
    try {
      result = await esbuild.build({
        ...entry,
        bundle: true,
        platform: 'node',
        format: 'esm',
        target: 'node20',
        write: false,
        banner: { js: BANNER },
        external: ['*.node', 'msgpackr-extract', 'cpu-features'],
        logLevel: 'silent',
        legalComments: 'none',
      });
    } catch (cause) {
      throw new CairnError('CAIRN_FN_REF', `Cannot bundle ${module} for remote execution: ${(cause as Error).message.split('\n')[0]}. Check it imports only installed packages.`, { cause });
    }
    const bytes = result.outputFiles?.[0]?.contents ?? new Uint8Array();
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    return { hash: sha256.slice(0, 16), sha256, fileName, bytes };
  }
}
