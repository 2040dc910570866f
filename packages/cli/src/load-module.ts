/**
 * Imports user modules (pipelines, `cairn.config.ts`) in ES-module and CommonJS projects alike:
 * TypeScript through tsx (registered once, on demand), ES-module syntax in a CommonJS package
 * loaded as an ES module, and a failure reported by its first real error (file:line:col).
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { CairnErrorCode } from '@cairn/core';
import { describeLoadError, isTypeScriptModule, registerEsmSyntaxHook, registerModuleLoaders } from '@cairn/runner';
import { cliError } from './errors.js';

/** What a user module is, for messages and error codes. */
export type UserModuleKind = 'pipeline' | 'config';

const CODES: Readonly<Record<UserModuleKind, CairnErrorCode>> = { pipeline: 'CAIRN_PIPELINE_LOAD', config: 'CAIRN_CONFIG' };

/**
 * Sets up loaders for `path` in this process and, through `NODE_OPTIONS`, in the child processes
 * the runner starts (a `process` worker re-imports step functions from the same modules).
 */
async function prepareLoaders(path: string, from: readonly string[]): Promise<void> {
  // `.mjs` is an ES module everywhere: no hook (registering one starts a loader thread, ~30 ms).
  if (!isTypeScriptModule(path) && !/\.jsx?$/.test(path)) return;
  const { childImportFlag } = isTypeScriptModule(path) ? await registerModuleLoaders(from) : registerEsmSyntaxHook();
  const current = process.env.NODE_OPTIONS ?? '';
  if (!current.includes(childImportFlag)) process.env.NODE_OPTIONS = `${current} ${childImportFlag}`.trim();
}

/**
 * The module's namespace. A module compiled to CommonJS arrives as `{ default: module.exports }`;
 * when it was ES syntax (`__esModule`), its exports are inside.
 */
function namespaceOf(module: Record<string, unknown>): Record<string, unknown> {
  const d = module.default as { __esModule?: unknown } | null | undefined;
  return typeof d === 'object' && d !== null && d.__esModule === true ? (d as Record<string, unknown>) : module;
}

/** Imports `file` (relative to `cwd`); `what` names it in errors ("pipeline", "config"). */
export async function importUserModule(file: string, what: UserModuleKind, cwd = process.cwd()): Promise<{ path: string; module: Record<string, unknown> }> {
  const path = resolve(cwd, file);
  const code = CODES[what];
  if (!existsSync(path)) {
    throw cliError(code, `The ${what} file ${path} does not exist.`, 'Check the path (it is resolved from the current directory).');
  }
  const from = [path, import.meta.url];
  try {
    await prepareLoaders(path, from);
    const module = (await import(pathToFileURL(path).href)) as Record<string, unknown>;
    return { path, module: namespaceOf(module) };
  } catch (cause) {
    const [first = '', ...rest] = describeLoadError(cause, path, from).split('\n');
    const detail = rest.length > 0 ? `\n${rest.join('\n')}` : '';
    const stop = /[.!?]$/.test(first) ? '' : '.';
    throw cliError(code, `Cannot load the ${what} file ${path}: ${first}${stop}`, `Fix that and rerun (--verbose shows the stack).${detail}`, cause);
  }
}
