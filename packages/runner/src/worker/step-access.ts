/**
 * `ctx.localInput(dep)` and `ctx.store` of a step, wherever it runs. In the runner's process the
 * store hands them over itself (`Store.stepAccess`); a worker in another thread, process or host
 * re-imports the builder the task names (`task.storeAccess`: module + export, plain options),
 * as step functions are re-imported. On a filesystem store there is no access: a dependency's
 * path is already local, and `localInput` returns it.
 */
import { CairnError, describeValue, formatFnRef, resolveFnRef, type TaskPayload } from '@cairn/core';
import type { StepStoreAccess } from '../store/store.js';

/** The output path of the dependency `dep` names: a `depPaths` key (`nameWithHash`) or one of its values. */
function depPathOf(step: string, depPaths: Readonly<Record<string, string>>, dep: unknown): string {
  if (typeof dep === 'string') {
    if (Object.hasOwn(depPaths, dep)) return depPaths[dep] as string;
    for (const key in depPaths) if (depPaths[key] === dep) return dep;
  }
  const keys = Object.keys(depPaths);
  throw new CairnError(
    'CAIRN_BAD_DEPENDENCY',
    `Step "${step}": ctx.localInput(${typeof dep === 'string' ? JSON.stringify(dep) : describeValue(dep)}) names none of its dependencies (${keys.join(', ') || 'it has none'}); pass a dependency's nameWithHash (a key of ctx.depPaths) or its output path.`,
    { step },
  );
}

/** `ctx.localInput` of a step: the dependency's local directory, fetched through `access` when the store has one. */
export function localInputFor(step: string, depPaths: Readonly<Record<string, string>>, access: () => StepStoreAccess | undefined | Promise<StepStoreAccess | undefined>): (dep: string) => Promise<string> {
  return async (dep) => {
    const path = depPathOf(step, depPaths, dep);
    const a = await access();
    return a === undefined ? path : a.localInput(path);
  };
}

/**
 * The step access `task.storeAccess` names, built where the step runs; undefined without one.
 * Throws `CAIRN_STORE` naming the module and the fix when it cannot be loaded here.
 */
export async function workerStoreAccess(task: TaskPayload): Promise<StepStoreAccess | undefined> {
  const ref = task.storeAccess;
  if (ref === undefined) return undefined;
  const fnRef = { module: ref.module, export: ref.export };
  try {
    const build = await resolveFnRef(fnRef, undefined, task.name);
    return (await build(ref.options, ref.path)) as StepStoreAccess;
  } catch (cause) {
    throw new CairnError(
      'CAIRN_STORE',
      `Step "${task.name}": the store's step access (${formatFnRef(fnRef)}, for ctx.store and ctx.localInput) cannot be loaded where the step runs: ${String((cause as Error).message).replace(/\.?$/, '.')} Install ${ref.module} there, or run the step on an executor on the runner's host.`,
      { step: task.name, cause },
    );
  }
}
