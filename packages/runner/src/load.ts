/**
 * What `run()`, `runner.load()` and `runner.resolve()` return: each step's artifact loaded by its
 * kind, in the runner's process. A step with a kind is loaded as that kind (`CAIRN_ARTIFACT_KIND`
 * when its record names another); a step without one gives the value it returned.
 */
import { fileURLToPath } from 'node:url';
import { adoptedNotLocal, type ArtifactStep, CairnError, hasScheme, isResultKind, kindMismatch, type StepSpec } from '@cairn/core';
import type { LoadedArtifact } from './context.js';
import type { RunSummary } from './run/summary.js';
import type { Store } from './store/store.js';

/** A local directory holding the output at `path` (whose status lives at `dir`): the path itself, or the store's download. */
function localOf(store: Store, spec: StepSpec, dir: string, path: string): () => Promise<string> {
  const step = spec.name;
  return async () => {
    if (!hasScheme(path)) return path;
    if (path.startsWith('file://')) return fileURLToPath(path);
    if (spec.adoptedSource !== undefined) throw adoptedNotLocal(step, path);
    const access = store.stepAccess?.(dir);
    if (access === undefined) {
      throw new CairnError('CAIRN_STORE', `Step "${step}": its output ${path} is not on this machine and the store ("${store.kind}") offers no way to fetch it; load it with a kind that reads URLs.`, { step });
    }
    return access.localInput(path);
  };
}

/** Loads each of `specs` (run by `summary`) from `store`, in order. */
export async function loadArtifacts(store: Store, specs: readonly StepSpec[], summary: RunSummary): Promise<LoadedArtifact[]> {
  const prefix = summary.prefix;
  const n = specs.length;
  const dirs = new Array<string>(n);
  const results = new Array<unknown>(n);
  const missing: number[] = [];
  for (let i = 0; i < n; i++) {
    const spec = specs[i] as StepSpec;
    const o = summary.outcome(spec);
    dirs[i] = o?.path ?? spec.outputPath(prefix);
    if (o?.hasResult) results[i] = o.result;
    else missing.push(i);
  }
  if (missing.length > 0) {
    const states = await store.readStates(missing.map((i) => dirs[i] as string), true);
    missing.forEach((i, k) => {
      const spec = specs[i] as StepSpec;
      const record = states[k]?.record;
      const recorded = record?.artifact;
      if (recorded !== undefined && spec.artifact !== undefined && recorded !== spec.artifact.name) throw kindMismatch(spec.name, dirs[i] as string, recorded, spec.artifact.name);
      results[i] = record?.result;
    });
  }
  return Promise.all(
    specs.map(async (spec, i): Promise<LoadedArtifact> => {
      const dir = dirs[i] as string;
      const path = spec.adoptedSource ?? dir;
      const kind = spec.artifact;
      const result = results[i];
      if (kind === undefined || isResultKind(kind)) return result === undefined ? ({ path } as LoadedArtifact) : { path, value: result };
      const value = await kind.load(path, { step: spec.name, result, local: localOf(store, spec, dir, path) });
      return { path, value };
    }),
  );
}

/** The handle type's loaded artifact. */
export type LoadedOf<H> = LoadedArtifact<H extends ArtifactStep<infer T> ? T : unknown>;
