/**
 * Imports user modules (pipelines, `cairn.config.ts`): plain JavaScript through `import()`,
 * TypeScript through tsx's loader hooks, registered once and on demand.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { extname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { usageError } from './errors.js';

const TS_EXTENSIONS = new Set(['.ts', '.mts', '.cts', '.tsx']);

let tsxRegistered = false;

/**
 * Registers tsx for this process and, through `NODE_OPTIONS`, for the child processes the
 * runner starts (a `process` worker re-imports step functions from the same `.ts` modules).
 */
async function registerTsx(): Promise<void> {
  if (tsxRegistered) return;
  // Both hooks, as `node --import tsx` does: without the CommonJS one, a `.ts` file outside a
  // `"type": "module"` package is loaded as CommonJS and fails on its `import` statements.
  const [{ register: registerCjs }, { register: registerEsm }] = await Promise.all([import('tsx/cjs/api'), import('tsx/esm/api')]);
  registerCjs();
  registerEsm();
  // Not `import.meta.resolve`: the CommonJS build has no such function (tsup shims only `.url`).
  const loader = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  const flag = `--import=${loader}`;
  const current = process.env.NODE_OPTIONS ?? '';
  if (!current.includes(flag)) process.env.NODE_OPTIONS = `${current} ${flag}`.trim();
  tsxRegistered = true;
}

/** Imports `file` (relative to `cwd`) as an ES module; `what` names it in errors ("pipeline", "config"). */
export async function importUserModule(file: string, what: string, cwd = process.cwd()): Promise<{ path: string; module: Record<string, unknown> }> {
  const path = resolve(cwd, file);
  if (!existsSync(path)) {
    throw usageError(`The ${what} file ${path} does not exist.`, 'Check the path (it is resolved from the current directory).');
  }
  if (TS_EXTENSIONS.has(extname(path))) await registerTsx();
  try {
    const module = (await import(pathToFileURL(path).href)) as Record<string, unknown>;
    return { path, module };
  } catch (cause) {
    const detail = cause instanceof Error ? cause.message.split('\n')[0] : String(cause);
    throw usageError(`Cannot load the ${what} file ${path}: ${detail}.`, 'Fix the error in that module (rerun with --verbose for the stack).', cause);
  }
}
