/**
 * Adopted artifacts (`adopt()` in @cairn/core) in a run: their source must exist before the
 * adopted step is recorded and before anything that depends on it starts. Nothing is ever
 * written into a source: the adopted step's status and record live at its own path in the store.
 */
import { stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { CairnError, hasScheme, type StepSpec } from '@cairn/core';
import { schemeOf } from '../store-registry.js';
import type { Store } from '../store/store.js';

/** Whether `source` exists: a local path or `file://` URL on this machine, else a directory (prefix) on `store`, the store of the run's `prefix`. */
async function exists(store: Store, prefix: string, step: string, source: string): Promise<boolean> {
  if (!hasScheme(source) || source.startsWith('file://')) {
    try {
      await stat(source.startsWith('file://') ? fileURLToPath(source) : source);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return false;
      throw new CairnError('CAIRN_STORE', `Adopted artifact "${step}": its source ${source} cannot be checked (${(err as Error).message}); fix its permissions.`, { step, cause: err });
    }
  }
  if (schemeOf(source) === schemeOf(prefix)) {
    // Steps stored under it (a store's own entries), or any file there.
    if (store.list !== undefined && (await store.list(source)).length > 0) return true;
    if (store.browse !== undefined) return (await store.browse.listFiles(source)).length > 0;
    if (store.list !== undefined) return false;
  }
  throw new CairnError(
    'CAIRN_STORE',
    `Adopted artifact "${step}": its source ${source} is a URL the run's store ("${store.kind}", for ${prefix}) cannot look into; adopt a URL on the store of the run's prefix (same scheme), or a local path.`,
    { step },
  );
}

/** The error of an adopted artifact whose source is missing (`dependent`: the step that needed it). */
export function adoptMissing(spec: StepSpec, dependent?: string): CairnError {
  const source = spec.adoptedSource as string;
  const who = dependent === undefined ? '' : ` Step "${dependent}" depends on it and was not started.`;
  return new CairnError(
    'CAIRN_ADOPT_MISSING',
    `Adopted artifact "${spec.name}@${String(spec.version)}": its source ${source} does not exist.${who} Put the data there (Cairn never creates or writes a source), or adopt it from where it is: adopt({ name: "${spec.name}", source: … }).`,
    { step: dependent ?? spec.name },
  );
}

/**
 * Throws `CAIRN_ADOPT_MISSING` when `spec` (if adopted) or an adopted dependency of it has no
 * source; `dependent` names `spec` in the message when it is the dependent. Resolves at once when
 * nothing is adopted.
 */
export function checkAdoptedSources(store: Store, prefix: string, spec: StepSpec): Promise<void> | undefined {
  // Called for every step: no allocation unless something is adopted.
  let adopted: StepSpec[] | undefined;
  if (spec.adoptedSource !== undefined) adopted = [spec];
  const deps = spec.deps;
  for (let i = 0; i < deps.length; i++) if ((deps[i] as StepSpec).adoptedSource !== undefined) (adopted ??= []).push(deps[i] as StepSpec);
  if (adopted === undefined) return undefined;
  return checkSources(store, prefix, spec, adopted);
}

/** The checks of {@link checkAdoptedSources} (a function of its own: a closure there would make every call allocate what it captures). */
async function checkSources(store: Store, prefix: string, spec: StepSpec, adopted: readonly StepSpec[]): Promise<void> {
  for (const a of adopted) {
    if (!(await exists(store, prefix, a.name, a.adoptedSource as string))) throw adoptMissing(a, a === spec ? undefined : spec.name);
  }
}
