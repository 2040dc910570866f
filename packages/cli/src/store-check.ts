/**
 * Is a prefix a Cairn store? Commands that remove things (`cairn clean`) ask first, so a wrong
 * prefix (`--prefix "$STORE"` with `STORE` unset, a typo) can never make them delete a user's
 * directory. A store is a prefix with the store marker (`.cairn/store.json`, written by every
 * run: runner/src/store/marker.ts), or, for stores written before the marker existed (earlier
 * versions, Marin pipelines run through Cairn), one where some step below the prefix holds a
 * Cairn record (`.artifact.json` with `"cairn": 1`). A status file alone (`.executor_status`)
 * never makes a store: anyone may have such a file.
 */
import { CairnError } from '@cairn/core';
import { STORE_MARKER_FILE } from '@cairn/runner';
import type { ConfigSource } from './config.js';
import type { StoredStep } from './store-scan.js';
import type { StoreView } from './store-view.js';

/** How a prefix was recognised as a store. */
export type StoreEvidence =
  /** The store marker is there. */
  | 'marker'
  /** No marker, but Cairn records (a store an earlier version wrote). */
  | 'records';

/** Where a prefix came from, in a user's words. */
const SOURCE: Readonly<Record<ConfigSource, string>> = { flag: '--prefix', env: 'CAIRN_PREFIX', file: 'the config file\'s prefix', default: 'the default prefix' };

/** What `steps` show of a directory that is not a store, for the message. */
function found(steps: readonly StoredStep[]): string {
  if (steps.length === 0) return 'nothing Cairn wrote';
  const shown = steps.slice(0, 3).map((s) => s.rel);
  return `${steps.length} director${steps.length === 1 ? 'y' : 'ies'} with status or lease files but no Cairn record (${shown.join(', ')}${steps.length > 3 ? ', …' : ''})`;
}

/**
 * Throws `CAIRN_NOT_A_STORE` unless `view`'s prefix is a Cairn store (see the module comment);
 * `steps` is what a scan of it found, `source` where the prefix came from.
 */
export async function requireStore(view: StoreView, steps: readonly StoredStep[], source: ConfigSource, what: string): Promise<StoreEvidence> {
  if ((await view.store.readMarker?.(view.prefix)) != null) return 'marker';
  if (steps.some((s) => s.record?.cairn === 1)) return 'records';
  throw new CairnError(
    'CAIRN_NOT_A_STORE',
    `Refusing to ${what} ${view.prefix} (from ${SOURCE[source]}): it is not a Cairn store. It has no store marker (${STORE_MARKER_FILE}) and holds ${found(steps)}. Nothing was removed. ` +
      'Check the prefix (--prefix, CAIRN_PREFIX or prefix in cairn.config.ts); if this is a store an earlier Cairn version wrote, run a pipeline on it once (the run writes the marker), then clean.',
  );
}
