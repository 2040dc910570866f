/**
 * The names of the steps a run is asked for (a notification's `targets`), read as the run pulls
 * them: an array is read at once and handed on unchanged (it is still lowered in one call); an
 * iterable is wrapped so each step is named as it is pulled.
 */
import type { StepInput } from '../lower-inputs.js';

/** `steps` to hand to the run, and the list its names are collected into. */
export function trackTargets<S extends Iterable<StepInput> | AsyncIterable<StepInput>>(steps: S): { steps: S; names: string[] } {
  const names: string[] = [];
  if (Array.isArray(steps)) {
    for (const s of steps as readonly StepInput[]) add(names, s);
    return { steps, names };
  }
  if (Symbol.asyncIterator in steps) {
    const source = steps as AsyncIterable<StepInput>;
    return {
      steps: (async function* () {
        for await (const s of source) {
          add(names, s);
          yield s;
        }
      })() as unknown as S,
      names,
    };
  }
  const source = steps as Iterable<StepInput>;
  return {
    steps: (function* () {
      for (const s of source) {
        add(names, s);
        yield s;
      }
    })() as unknown as S,
    names,
  };
}

/** Names `s` when it has a name (a bad item is refused by the run, not here). */
function add(names: string[], s: unknown): void {
  const name = (s as { name?: unknown } | null)?.name;
  if (typeof name === 'string') names.push(name);
}
