/**
 * `ctx.path(dep)` and `ctx.resolved(dep)` of a step, wherever it runs. A dependency is named by
 * its handle (or its `nameWithHash`); it is loaded with the kind on the handle passed, in the
 * process that calls: kinds are code and never travel with a task. A step that runs elsewhere
 * is re-imported by module + export there, and so are the handles its module defines, kinds
 * included. Each dependency is loaded once per step attempt (a retry loads again).
 */
import { fileURLToPath } from 'node:url';
import { adoptedNotLocal, type ArtifactStep, CairnError, describeValue, hasScheme, isArtifactStep, isResultKind, lower } from '@cairn/core';

/** What a step's dependency artifacts are read from. */
export interface DepArtifactSource {
  readonly step: string;
  readonly depPaths: Readonly<Record<string, string>>;
  readonly depResults: Readonly<Record<string, unknown>>;
  readonly localInput: (dep: string) => Promise<string>;
}

/** The two context functions. */
export interface DepArtifacts {
  path(dep: ArtifactStep<unknown> | string): string;
  resolved<T>(dep: ArtifactStep<T>): Promise<T>;
}

/** Length of `-` and a 16-hex-digit hash at the end of a `nameWithHash`. */
const HASH_TAIL = 17;

function notADep(src: DepArtifactSource, fn: string, dep: unknown): CairnError {
  const shown = isArtifactStep(dep) ? dep.ident : typeof dep === 'string' ? JSON.stringify(dep) : describeValue(dep);
  const keys = Object.keys(src.depPaths);
  return new CairnError(
    'CAIRN_BAD_DEPENDENCY',
    `Step "${src.step}": ctx.${fn}(${shown}) names none of its dependencies (${keys.join(', ') || 'it has none'}); pass a handle that is in the step's inputs (or a key of ctx.depPaths).`,
    { step: src.step },
  );
}

/** The `depPaths` key of `dep`: by name when one dependency has it, else by its identity (lowered here). */
function keyOf(src: DepArtifactSource, fn: string, dep: unknown): string {
  if (typeof dep === 'string') {
    if (Object.hasOwn(src.depPaths, dep)) return dep;
    throw notADep(src, fn, dep);
  }
  if (!isArtifactStep(dep)) throw notADep(src, fn, dep);
  let found: string | undefined;
  let many = false;
  for (const key in src.depPaths) {
    if (key.length - HASH_TAIL === dep.name.length && key.startsWith(dep.name)) {
      many = found !== undefined;
      found = key;
      if (many) break;
    }
  }
  if (many) found = lower(dep).nameWithHash;
  if (found === undefined || !Object.hasOwn(src.depPaths, found)) throw notADep(src, fn, dep);
  return found;
}

/** `ctx.path` and `ctx.resolved` over `src`. */
export function depArtifacts(src: DepArtifactSource): DepArtifacts {
  const loaded = new Map<string, Promise<unknown>>();
  return {
    path: (dep) => src.depPaths[keyOf(src, 'path', dep)] as string,
    resolved<T>(dep: ArtifactStep<T>): Promise<T> {
      let key: string;
      try {
        key = keyOf(src, 'resolved', dep);
      } catch (err) {
        return Promise.reject(err);
      }
      let p = loaded.get(key);
      if (p === undefined) {
        const path = src.depPaths[key] as string;
        const kind = dep.artifact;
        const result = src.depResults[key];
        const local = dep.adoptedSource === undefined || !hasScheme(path) ? () => src.localInput(key) : path.startsWith('file://') ? () => Promise.resolve(fileURLToPath(path)) : () => Promise.reject(adoptedNotLocal(dep.name, path));
        p = kind === undefined || isResultKind(kind) ? Promise.resolve(result) : (async () => kind.load(path, { step: dep.name, result, local }))();
        loaded.set(key, p);
      }
      return p as Promise<T>;
    },
  };
}
