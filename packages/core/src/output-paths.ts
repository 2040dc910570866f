/**
 * Two different steps of one lowering must not resolve to one output path: the runner would
 * see one step, run one function and hand both dependents its output. An `apply` step lives at
 * its pin or at its layout's location (`name/version-hash` or `name/version`); lowering already
 * refuses two different steps with one name@version, so only pinned steps can collide: with each
 * other, or with the location of a versioned step (`pin: 'a/v1'` is where a versioned `a@v1`
 * lives). A content-addressed location holds a hash no pin is expected to spell.
 */
import { CairnError } from './errors.js';
import type { Layout } from './handle.js';

/** What this check reads of a lowered handle. */
interface Located {
  readonly name: string;
  readonly version: string;
  /** Normalised by `checkLocation` when the handle was made. */
  readonly pin: string | undefined;
  readonly layout: Layout | undefined;
}

/** True when node `from` depends on node `to`, directly or not (only called to word an error). */
function dependsOn(offsets: Uint32Array, edges: Uint32Array, from: number, to: number): boolean {
  const seen = new Set<number>();
  const stack = [from];
  while (stack.length > 0) {
    const i = stack.pop() as number;
    for (let k = offsets[i] as number; k < (offsets[i + 1] as number); k++) {
      const d = edges[k] as number;
      if (d === to) return true;
      if (!seen.has(d)) {
        seen.add(d);
        stack.push(d);
      }
    }
  }
  return false;
}

function collision(sources: readonly Located[], offsets: Uint32Array, edges: Uint32Array, pinned: number, other: number, otherPinned: boolean): CairnError {
  const p = sources[pinned] as Located;
  const o = sources[other] as Located;
  const loc = p.pin as string;
  const where = loc.startsWith('/') || /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(loc) ? JSON.stringify(loc) : `${JSON.stringify(loc)} under the prefix`;
  const how = otherPinned ? `both are pinned to ${where}` : `"${p.name}" is pinned to ${where}, which is where "${o.name}@${o.version}" lives (layout 'versioned': name/version)`;
  const dep = dependsOn(offsets, edges, pinned, other)
    ? ` "${p.name}" depends on "${o.name}", so it would overwrite its own input.`
    : dependsOn(offsets, edges, other, pinned)
      ? ` "${o.name}" depends on "${p.name}", so it would overwrite its own input.`
      : '';
  return new CairnError(
    'CAIRN_DUPLICATE_STEP',
    `Steps "${p.name}@${p.version}" and "${o.name}@${o.version}" resolve to one output path: ${how}.${dep} Only one of them would run and both would get its output. Give "${p.name}" another pin (or none).`,
    { step: p.name },
  );
}

/**
 * Refuses two nodes of one lowering that resolve to one output path (`CAIRN_DUPLICATE_STEP`
 * naming both, and saying when one depends on the other). `pinned` lists the pinned nodes; the
 * unpinned ones are only looked at when a pin has the form of a default location (`n/v`).
 */
export function checkOutputPaths(sources: readonly Located[], offsets: Uint32Array, edges: Uint32Array, pinned: readonly number[], layout: Layout): void {
  if (pinned.length === 0) return;
  const byPin = new Map<string, number>();
  // Pins shaped like `name/version`, by name: they may be another step's default location.
  const defaults = new Map<string, number[]>();
  for (const i of pinned) {
    const pin = (sources[i] as Located).pin as string;
    const prior = byPin.get(pin);
    if (prior !== undefined) throw collision(sources, offsets, edges, i, prior, true);
    byPin.set(pin, i);
    const slash = pin.indexOf('/');
    if (slash > 0 && slash === pin.lastIndexOf('/') && !pin.includes('://')) {
      const name = pin.slice(0, slash);
      const list = defaults.get(name);
      if (list) list.push(i);
      else defaults.set(name, [i]);
    }
  }
  if (defaults.size === 0) return;
  for (let j = 0; j < sources.length; j++) {
    const s = sources[j] as Located;
    if (s.pin !== undefined || (s.layout ?? layout) !== 'versioned') continue;
    const list = defaults.get(s.name);
    if (list === undefined) continue;
    const at = `${s.name}/${s.version}`;
    for (const i of list) if ((sources[i] as Located).pin === at) throw collision(sources, offsets, edges, i, j, false);
  }
}
