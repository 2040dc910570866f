/**
 * Step names given to `rebuild` or `acceptDrift` must name a step of the graph: a typo
 * (`rebuild: ['trian']`) silently rebuilt nothing. Checked where the whole graph is known before
 * anything runs: `run()`/`plan()` given an array (a generator's steps are only known as they
 * are pulled, so its names are not checked).
 */
import { CairnError, indexSpecs, nearestName } from '@cairn/core';
import type { LowerOptions } from '@cairn/core';
import { lowerInputs } from '../lower-inputs.js';

/** The string selectors of a run option (`'all'`/`true`/handles name nothing by string). */
function namesOf(option: unknown): string[] {
  return Array.isArray(option) ? option.filter((r): r is string => typeof r === 'string') : [];
}

/**
 * Throws `CAIRN_NO_SUCH_STEP` naming the nearest step when a name in `rebuild` or `acceptDrift`
 * matches no step of `steps` (by name, `name@version` or `nameWithHash`). Does nothing for a
 * non-array `steps` or when no names are given.
 */
export function checkSelectorNames(steps: unknown, options: { readonly rebuild?: unknown; readonly acceptDrift?: unknown }, lowerOptions: LowerOptions, what: string): void {
  const given = [...namesOf(options.rebuild).map((n) => ['rebuild', n] as const), ...namesOf(options.acceptDrift).map((n) => ['acceptDrift', n] as const)];
  if (given.length === 0 || !Array.isArray(steps)) return;
  const known = new Set<string>();
  const names = new Set<string>();
  for (const spec of indexSpecs(lowerInputs(steps, lowerOptions, what)).nodes) {
    names.add(spec.name);
    known.add(spec.name).add(spec.nameWithHash);
    if (spec.version !== undefined) known.add(spec.ident);
  }
  for (const [option, name] of given) {
    if (known.has(name)) continue;
    const near = nearestName(name, names);
    throw new CairnError(
      'CAIRN_NO_SUCH_STEP',
      `${what}: ${option} names "${name}", which is no step of this graph${near !== undefined ? `; did you mean "${near}"?` : '.'} Steps: ${[...names].slice(0, 20).join(', ')}${names.size > 20 ? ', …' : ''}. Give a step's name, name@version or nameWithHash.`,
    );
  }
}
