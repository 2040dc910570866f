/**
 * How deep a value may nest. Every walk over user values (canonical encoding, dependency
 * discovery, input resolution, the msgpack codec) is recursive; without a bound a value nested
 * 100,000 levels deep ends in a raw `RangeError` from whichever walk sees it first. msgpackr
 * itself overflows at about 1,300 levels, so the bound sits well below that and far above any
 * real configuration.
 */
import { CairnError } from './errors.js';

/** Containers (arrays, plain objects, Maps, Sets) a value may nest; deeper is `CAIRN_TOO_DEEP`. */
export const MAX_VALUE_DEPTH = 256;

/** `root` followed by `keys` (`inputs.a[0].b`), with the middle left out when it is long. */
export function formatKeyPath(root: string, keys: readonly (string | number)[]): string {
  const part = (k: string | number) => (typeof k === 'number' ? `[${k}]` : k.startsWith('<') || k.startsWith('.get(') ? k : /^[A-Za-z_$][\w$]*$/.test(k) ? `.${k}` : `[${JSON.stringify(k)}]`);
  if (keys.length <= 12) return root + keys.map(part).join('');
  return `${root}${keys.slice(0, 6).map(part).join('')}…(${keys.length - 10} more levels)…${keys.slice(-4).map(part).join('')}`;
}

/** The `CAIRN_TOO_DEEP` error for a value that reached {@link MAX_VALUE_DEPTH} at `keys` under `root`. */
export function tooDeep(step: string | undefined, root: string, keys: readonly (string | number)[]): CairnError {
  const where = step === undefined ? '' : `Step "${step}": `;
  return new CairnError(
    'CAIRN_TOO_DEEP',
    `${where}${root} nests more than ${MAX_VALUE_DEPTH} levels deep (the limit was hit at ${formatKeyPath(root, keys)}). Flatten the value, or pass large structures as a file path instead of inline data.`,
    { step },
  );
}
