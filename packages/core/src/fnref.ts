import { isAbsolute } from 'node:path';
import { pathToFileURL } from 'node:url';
import { COMMAND_MODULE, commandRunner } from './command-ref.js';
import { CairnError } from './errors.js';
import { checkKnownKeys } from './known-keys.js';
import type { FnRef, Resources } from './types.js';
import { checkExecutorName } from './validate.js';

const REMOTE_KEYS: ReadonlySet<string> = new Set(['resources', 'executor']);

const REF = Symbol.for('cairn.fnRef');
const REMOTE = Symbol.for('cairn.remote');

/** Options of {@link remote}: where a step runs and what it needs. Never part of identity. */
export interface RemoteOptions {
  /** Resources the step needs. */
  readonly resources?: Resources;
  /** Executor name; without one, the runner's default executor for resource-declaring steps. */
  readonly executor?: string;
}

const IDENT = /^[A-Za-z_$][\w$]*$/;

/** Normalises a module location: an absolute path becomes a `file://` URL; relative paths are refused. */
export function normalizeModule(module: string, exportName: string): string {
  if (typeof module !== 'string' || module.length === 0) {
    throw new CairnError('CAIRN_FN_REF', `defineStep(…, "${exportName}"): the module is empty; pass import.meta.url.`);
  }
  if (module.startsWith('file://') || /^[A-Za-z][A-Za-z0-9+.-]*:/.test(module) && !isAbsolute(module)) return module;
  if (isAbsolute(module)) return pathToFileURL(module).href;
  if (module.startsWith('.')) {
    throw new CairnError(
      'CAIRN_FN_REF',
      `defineStep("${module}", "${exportName}"): a relative module path cannot be resolved elsewhere; pass import.meta.url (or an absolute path).`,
    );
  }
  return module; // bare package specifier
}

/**
 * Marks an exported function as a step function that can run in another thread, process
 * or host: it is referenced there as `module` + `exportName` and re-imported.
 * Returns the same function, so `export const train = defineStep(import.meta.url, 'train', fn)`.
 */
export function defineStep<F extends (...args: never[]) => unknown>(module: string, exportName: string, fn: F): F {
  if (typeof fn !== 'function') {
    throw new CairnError('CAIRN_FN_REF', `defineStep(…, "${exportName}"): the third argument must be the function itself.`);
  }
  if (!IDENT.test(exportName)) {
    throw new CairnError('CAIRN_FN_REF', `defineStep(…, ${JSON.stringify(exportName)}): the export name must be a JavaScript identifier.`);
  }
  const ref: FnRef = Object.freeze({ module: normalizeModule(module, exportName), export: exportName });
  const existing = (fn as unknown as Record<symbol, FnRef | undefined>)[REF];
  if (existing && (existing.module !== ref.module || existing.export !== ref.export)) {
    throw new CairnError(
      'CAIRN_FN_REF',
      `defineStep: this function is already defined as ${existing.module}#${existing.export}; define each function once.`,
    );
  }
  Object.defineProperty(fn, REF, { value: ref, enumerable: false, configurable: false, writable: false });
  return fn;
}

/** The module + export of a function marked with {@link defineStep}, or `undefined` for an inline closure. */
export function getFnRef(fn: unknown): FnRef | undefined {
  if (typeof fn !== 'function') return undefined;
  return (fn as unknown as Record<symbol, FnRef | undefined>)[REF];
}

/**
 * Marks a step function to run on a remote executor (Marin's `RemoteCallable`).
 * Returns a wrapper carrying the options; identity is unaffected.
 */
export function remote<F extends (...args: never[]) => unknown>(fn: F, options: RemoteOptions = {}): F {
  if (typeof fn !== 'function') throw new CairnError('CAIRN_FN_REF', 'remote(fn, options): the first argument must be the step function.');
  if (typeof options !== 'object' || options === null) throw new CairnError('CAIRN_INVALID_SPEC', `remote(${fn.name || 'fn'}, options): options must be an object like { resources, executor }.`);
  checkKnownKeys(options, REMOTE_KEYS, `remote(${fn.name || 'fn'})`);
  if (options.executor !== undefined) checkExecutorName(options.executor, `remote(${fn.name || 'fn'}): executor`, 'CAIRN_INVALID_SPEC');
  const ref = getFnRef(fn);
  const wrapper = ((...args: Parameters<F>) => fn(...args)) as unknown as F;
  Object.defineProperty(wrapper, 'name', { value: fn.name });
  Object.defineProperty(wrapper, REMOTE, { value: Object.freeze({ ...options, target: fn }) });
  if (ref) Object.defineProperty(wrapper, REF, { value: ref });
  return wrapper;
}

/** The options of a {@link remote} wrapper, with the wrapped function. */
export function getRemoteOptions(fn: unknown): (RemoteOptions & { target: unknown }) | undefined {
  if (typeof fn !== 'function') return undefined;
  return (fn as unknown as Record<symbol, (RemoteOptions & { target: unknown }) | undefined>)[REMOTE];
}

/** `module#export`, for messages. */
export function formatFnRef(ref: FnRef): string {
  return `${ref.module}#${ref.export}`;
}

/**
 * Imports `ref.module` and returns its export, checking it is a function (and, when
 * `expected` is given, that very function). Errors carry the path tried.
 */
export async function resolveFnRef(ref: FnRef, expected?: unknown, step?: string): Promise<(...args: unknown[]) => unknown> {
  // A command step's reserved reference is never imported: the runner registered its implementation.
  if (ref.module === COMMAND_MODULE) return commandRunner(step) as (...args: unknown[]) => unknown;
  let mod: Record<string, unknown>;
  try {
    mod = (await import(ref.module)) as Record<string, unknown>;
  } catch (cause) {
    throw new CairnError('CAIRN_FN_REF', `${step ? `Step "${step}": ` : ''}cannot import ${ref.module} (for export "${ref.export}"); check the path and that it was built.`, { step, cause });
  }
  let value = mod[ref.export];
  if (value === undefined && mod.default && typeof mod.default === 'object') value = (mod.default as Record<string, unknown>)[ref.export];
  if (typeof value !== 'function') {
    throw new CairnError('CAIRN_FN_REF', `${step ? `Step "${step}": ` : ''}${ref.module} has no exported function "${ref.export}" (found ${typeof value}); export it under that name.`, { step });
  }
  if (expected !== undefined && value !== expected && getRemoteOptions(expected)?.target !== value) {
    throw new CairnError('CAIRN_FN_REF', `${step ? `Step "${step}": ` : ''}${formatFnRef(ref)} is a different function than the one given to the step; define and export the same function.`, { step });
  }
  return value as (...args: unknown[]) => unknown;
}
