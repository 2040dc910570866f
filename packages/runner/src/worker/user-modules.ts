/**
 * Loading a user's modules (pipelines, config files, step modules) in any project: TypeScript
 * through tsx, ES-module syntax in a CommonJS package, and a failed import described by its
 * first real error (file:line:col and message) instead of a wrapper's headline.
 *
 * Used by the CLI (pipelines, `cairn.config.ts`) and by the threads executor's worker (a step
 * whose module is `.ts`). tsx is found from the user's module first, then from the callers'
 * own locations, so a project that installed `@cairn/cli` (which depends on tsx) has it.
 */
import { readFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CairnError } from '@cairn/core';

/** Extensions tsx must load. */
const TS_MODULE = /\.(?:ts|mts|cts|tsx)$/;

/** True for a `.ts`, `.mts`, `.cts` or `.tsx` path or file URL. */
export function isTypeScriptModule(pathOrUrl: string): boolean {
  return TS_MODULE.test(pathOrUrl.replace(/[?#].*$/, ''));
}

/**
 * A resolve hook that loads a project's own `.ts`/`.tsx`/`.js`/`.jsx` file as an ES module when
 * its package says CommonJS (no `"type": "module"`, as `npm init -y` writes) but the file is
 * written with ES-module syntax (`import`/`export`, `import.meta`, top-level `await`) and uses
 * no CommonJS (`require(`, `module.exports`). Node 22 detects such files itself; Node 20 and tsx
 * compile them to CommonJS, where top-level await is a syntax error and a default export arrives
 * wrapped. Files under `node_modules` are left alone.
 */
const ESM_HOOK = `
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
const ESM = /(?:^|[\\n;])[ \\t]*(?:import[ \\t]*[{*'"]|import[ \\t]+(?!\\w+[ \\t]*=[ \\t]*require)[\\w$]|export[ \\t{*]|await[ \\t(])|\\bimport\\.meta\\b/;
const CJS = /\\brequire[ \\t]*\\(|\\bmodule\\.exports\\b|\\bexports\\.[\\w$]+[ \\t]*=/;
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  if (r.format !== 'commonjs' && r.format !== 'commonjs-typescript' && r.format != null) return r;
  if (!r.url.startsWith('file:')) return r;
  const path = fileURLToPath(r.url);
  if (!/\\.(?:ts|tsx|js|jsx)$/.test(path) || /[\\\\/]node_modules[\\\\/]/.test(path)) return r;
  let src;
  try { src = readFileSync(path, 'utf8'); } catch { return r; }
  return ESM.test(src) && !CJS.test(src) ? { ...r, format: 'module' } : r;
}
`;

function dataUrl(source: string): string {
  // `'` stays literal in encodeURIComponent; encode it so the URL survives NODE_OPTIONS quoting.
  return `data:text/javascript,${encodeURIComponent(source).replace(/'/g, '%27')}`;
}

const ESM_HOOK_URL = dataUrl(ESM_HOOK);

/** Where tsx's entry points are. */
interface TsxPaths {
  readonly esmApi: string;
  readonly cjsApi: string;
  /** `tsx` itself (its `--import` loader). */
  readonly loader: string;
}

/** An `exports` target for ES-module `import` (tsx's shape: a string or `{ import: string | { default } }`). */
function importTarget(entry: unknown): string | undefined {
  if (typeof entry === 'string') return entry;
  if (typeof entry !== 'object' || entry === null) return undefined;
  const e = entry as Record<string, unknown>;
  return importTarget(e.import) ?? importTarget(e.default);
}

/**
 * tsx as seen from the first of `from` (paths or file URLs) that has it, resolved as `import`
 * would (its CommonJS entry points cannot load its ES-module hooks).
 */
function findTsx(from: readonly string[]): TsxPaths | undefined {
  for (const base of [...from, import.meta.url]) {
    let pkgFile: string;
    try {
      pkgFile = createRequire(base).resolve('tsx/package.json');
    } catch {
      continue; // not installed there; try the next location
    }
    const exports = (JSON.parse(readFileSync(pkgFile, 'utf8')) as { exports?: Record<string, unknown> }).exports ?? {};
    const at = (sub: string) => {
      const target = importTarget(exports[sub]);
      return target === undefined ? undefined : join(dirname(pkgFile), target);
    };
    const [esmApi, cjsApi, loader] = [at('./esm/api'), at('./cjs/api'), at('.')];
    if (esmApi !== undefined && cjsApi !== undefined && loader !== undefined) return { esmApi, cjsApi, loader };
  }
  return undefined;
}

/** What registering the loaders gives a caller. */
export interface ModuleLoaders {
  /**
   * A `--import=…` flag that sets up the same loaders in a child process (add it to
   * `NODE_OPTIONS` so `process` workers re-import TypeScript step modules too).
   */
  readonly childImportFlag: string;
}

let hookRegistered = false;

/**
 * Registers the ESM-syntax hook alone (JavaScript modules in CommonJS packages), once per
 * thread; the flag sets it up in a child process.
 */
export function registerEsmSyntaxHook(): ModuleLoaders {
  if (!hookRegistered) register(ESM_HOOK_URL);
  hookRegistered = true;
  return { childImportFlag: `--import=${dataUrl(`import { register } from 'node:module';\nregister(${JSON.stringify(ESM_HOOK_URL)});\n`)}` };
}

/** One registration per thread (module hooks are per thread). */
let registered: Promise<ModuleLoaders> | undefined;

/**
 * Registers tsx (its CommonJS and ES-module hooks, as `node --import tsx` does) and the
 * ESM-syntax hook in this thread, once. `from` are places to look for tsx first (the user's
 * module, the caller's own file). Throws `CAIRN_FN_REF` saying how to install tsx when none is
 * found.
 */
export function registerModuleLoaders(from: readonly string[] = []): Promise<ModuleLoaders> {
  registered ??= (async () => {
    const tsx = findTsx(from);
    if (tsx === undefined) {
      throw new CairnError('CAIRN_FN_REF', 'Loading TypeScript needs tsx, which is not installed where the module is. Install it next to the project (npm install --save-dev tsx), or build the module to JavaScript.');
    }
    const [{ register: registerCjs }, { register: registerEsm }] = (await Promise.all([import(pathToFileURL(tsx.cjsApi).href), import(pathToFileURL(tsx.esmApi).href)])) as [
      { register: () => unknown },
      { register: () => unknown },
    ];
    registerCjs();
    registerEsm();
    // Registered after tsx (again, if it was alone before), so it runs first and can tell tsx to emit an ES module.
    hookRegistered = false;
    registerEsmSyntaxHook();
    const child = `import ${JSON.stringify(pathToFileURL(tsx.loader).href)};\nimport { register } from 'node:module';\nregister(${JSON.stringify(ESM_HOOK_URL)});\n`;
    return { childImportFlag: `--import=${dataUrl(child)}` };
  })();
  registered.catch(() => (registered = undefined));
  return registered;
}

interface EsbuildMessage {
  readonly text: string;
  readonly location?: { readonly file: string; readonly line: number; readonly column: number; readonly lineText?: string } | null;
}

function formatEsbuildMessage(m: EsbuildMessage): string {
  const loc = m.location;
  if (!loc) return m.text;
  // esbuild's columns are 0-based; editors and Node count from 1.
  return `${loc.file}:${loc.line}:${loc.column + 1}: ${m.text}${loc.lineText !== undefined ? `\n    ${loc.lineText.trim()}` : ''}`;
}

/**
 * The first syntax error in `entry` and the project files it imports, found by esbuild (which
 * tsx ships): Node 20 reports an ES module's syntax error without saying where it is.
 */
function findSyntaxError(entry: string, from: readonly string[]): string | undefined {
  const tsx = findTsx([entry, ...from]);
  if (tsx === undefined) return undefined;
  try {
    const esbuild = createRequire(tsx.cjsApi)('esbuild') as {
      buildSync(o: Record<string, unknown>): unknown;
    };
    esbuild.buildSync({ entryPoints: [entry], absWorkingDir: dirname(entry), bundle: true, write: false, platform: 'node', format: 'esm', packages: 'external', logLevel: 'silent', target: 'esnext' });
  } catch (e) {
    const first = (e as { errors?: EsbuildMessage[] }).errors?.[0];
    if (first?.location) return formatEsbuildMessage({ ...first, location: { ...first.location, file: resolve(dirname(entry), first.location.file) } });
    if (first !== undefined) return first.text;
  }
  return undefined;
}

/** The first frame of `stack` in a project file (not Node's internals, not node_modules). */
function userFrame(stack: string | undefined): string | undefined {
  for (const line of (stack ?? '').split('\n').slice(1)) {
    const m = /(?:^at |\(|\s)((?:file:\/\/)?\/[^()\s]+:\d+:\d+)\)?$/.exec(line.trim());
    if (m && !m[1]!.includes('/node_modules/')) return m[1]!.replace(/^file:\/\//, '');
  }
  return undefined;
}

/**
 * One line (two with a code line) saying why importing `entry` failed: esbuild's first error
 * with file:line:col (not "Transform failed with N errors:"), a syntax error with its location,
 * or the thrown error's name and message with the project frame it came from.
 */
export function describeLoadError(err: unknown, entry?: string, from: readonly string[] = []): string {
  const e = err as { name?: unknown; message?: unknown; stack?: unknown; errors?: unknown; code?: unknown } | null;
  if (typeof e !== 'object' || e === null) return String(err);
  const errors = Array.isArray(e.errors) ? (e.errors as EsbuildMessage[]) : [];
  if (errors.length > 0 && typeof errors[0]?.text === 'string') return formatEsbuildMessage(errors[0]);
  const message = String(e.message ?? '');
  // tsx's CommonJS path puts esbuild's errors into the message: "Transform failed with 1 error:\nfile:1:24: ERROR: …".
  const esbuildLine = /^(.+?):(\d+):(\d+): ERROR: (.*)$/m.exec(message);
  if (esbuildLine) return formatEsbuildMessage({ text: esbuildLine[4]!, location: { file: esbuildLine[1]!, line: Number(esbuildLine[2]), column: Number(esbuildLine[3]) } });
  const name = typeof e.name === 'string' && e.name !== 'Error' ? `${e.name}: ` : '';
  const first = message.split('\n')[0] ?? '';
  if (e.name === 'SyntaxError' && entry !== undefined) {
    const found = findSyntaxError(entry, from);
    if (found !== undefined) return found;
  }
  const frame = userFrame(typeof e.stack === 'string' ? e.stack : undefined);
  return `${name}${first}${frame !== undefined && !first.includes(frame) ? ` (at ${frame})` : ''}`;
}
