/**
 * A command step's dependencies as local directories. On an object store a dependency's output
 * path is a URL (`s3://…`) that no program can open: each such dependency is fetched through
 * `ctx.localInput` (the store's download: once per host, keys that would leave the directory
 * refused) before the program starts, and every argument, environment value, input and context
 * entry that is exactly that URL becomes the local directory. On a filesystem store the paths are
 * local already and nothing is fetched or changed.
 */
import { hasScheme, type StepContext } from '@cairn/core';
import type { StepStoreAccess } from '../store/store.js';

/** True for a dependency path no program can open: a URL other than `file://`. */
const onObjectStore = (path: string): boolean => hasScheme(path) && !path.startsWith('file://');

/** Dependency URL → local directory; undefined when every dependency path is local already. */
export type LocalDeps = ReadonlyMap<string, string> | undefined;

/**
 * Fetches the dependencies whose output paths are URLs (not `file://`), one after another; the
 * answer itself, not a promise, when there is none to fetch (a filesystem store's steps wait for
 * nothing: bench row "local, 1 at a time" of command.bench.mjs).
 */
export function fetchLocalDeps(ctx: StepContext): LocalDeps | Promise<LocalDeps> {
  const depPaths = ctx.depPaths;
  for (const path of Object.values(depPaths)) if (onObjectStore(path)) return fetchEach(ctx, depPaths);
  return undefined;
}

async function fetchEach(ctx: StepContext, depPaths: Readonly<Record<string, string>>): Promise<LocalDeps> {
  let local: Map<string, string> | undefined;
  const fetch = ctx.localInput;
  for (const [key, path] of Object.entries(depPaths)) {
    if (fetch === undefined || !onObjectStore(path) || local?.has(path) === true) continue;
    (local ??= new Map()).set(path, await fetch(key));
  }
  return local;
}

/** `value` with every string that is a fetched dependency's URL replaced by its local directory (arrays and plain objects copied). */
export function localize<T>(value: T, local: LocalDeps): T {
  if (local === undefined) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return local.get(v) ?? v;
    if (Array.isArray(v)) return v.map(walk);
    if (typeof v === 'object' && v !== null && (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null)) {
      const out: Record<string, unknown> = {};
      for (const [k, e] of Object.entries(v)) out[k] = walk(e);
      return out;
    }
    return v;
  };
  return walk(value) as T;
}

/** `ctx.depPaths` (whatever object the executor made it) as a plain object, each fetched dependency's URL replaced by its local directory. */
export function localDepPaths(depPaths: Readonly<Record<string, string>>, local: LocalDeps): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, path] of Object.entries(depPaths)) out[key] = local?.get(path) ?? path;
  return out;
}

/**
 * For executors that start a command step's program from a script elsewhere (SSH, Slurm, SGE):
 * `depPaths` with each dependency on an object store fetched on the runner's host through the
 * job's store access (`JobRequest.storeAccess`) and replaced by its local directory, which the
 * executor then uploads to its host (staged mode) or shares with it. The program needs neither
 * Node nor credentials there. Unchanged on a filesystem store.
 */
export async function fetchJobDeps(depPaths: Readonly<Record<string, string>>, access: StepStoreAccess | undefined): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [key, path] of Object.entries(depPaths)) out[key] = access !== undefined && onObjectStore(path) ? await access.localInput(path) : path;
  return out;
}
