/**
 * The store marker: `{prefix}/.cairn/store.json`, written by a runner the first time it writes
 * to a store (right after `checkWritable`), so tools that remove things (`cairn clean`) can tell
 * a Cairn store from any other directory a wrong prefix points at. `.cairn` is reserved for
 * Cairn's own files (no step lives there), so the marker never collides with a step.
 *
 * Stores implement it through the optional `markStore` / `readMarker` of the store contract
 * (store.ts); the local store with the functions below, the memory store in memory.
 */
import { joinPath } from '@cairn/core';
import type { Io } from './local/io.js';

/** Where the marker lives, relative to the prefix. */
export const STORE_MARKER_FILE = '.cairn/store.json';

/** The store layout version this runner writes (bumped if the layout ever changes incompatibly). */
export const STORE_FORMAT_VERSION = 1;

/** The marker's content. */
export interface StoreMarker {
  /** Always `'cairn-store'`. */
  readonly format: 'cairn-store';
  /** The store layout version ({@link STORE_FORMAT_VERSION} when this runner wrote it). */
  readonly version: number;
  /** When the first run wrote it (epoch ms). */
  readonly created: number;
}

/** The marker's path under `prefix`. */
export function markerPath(prefix: string): string {
  return joinPath(prefix, STORE_MARKER_FILE);
}

/** A new marker, as the file's text. */
export function markerText(now = Date.now()): string {
  const marker: StoreMarker = { format: 'cairn-store', version: STORE_FORMAT_VERSION, created: now };
  return `${JSON.stringify(marker)}\n`;
}

/** The marker in `text`; null when it is not one (a file of the same name that Cairn did not write). */
export function parseStoreMarker(text: string): StoreMarker | null {
  try {
    const v = JSON.parse(text) as Partial<StoreMarker> | null;
    if (typeof v !== 'object' || v === null || v.format !== 'cairn-store' || typeof v.version !== 'number') return null;
    return { format: 'cairn-store', version: v.version, created: typeof v.created === 'number' ? v.created : 0 };
  } catch {
    return null;
  }
}

/**
 * Local store: writes the marker under `prefix` (a directory) unless one is there. Created
 * whole (a temp file linked into place), so two runners starting at once leave one complete
 * marker and a reader never sees half of one.
 */
export function* markLocalStore(io: Io, prefix: string): Generator<unknown, void, unknown> {
  const file = markerPath(prefix);
  if ((yield io.readText(file)) !== null) return;
  yield io.mkdir(file.slice(0, file.lastIndexOf('/')), true);
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    yield io.writeText(tmp, markerText());
    yield io.link(tmp, file);
  } finally {
    yield io.unlink(tmp);
  }
}

/** Local store: the marker under `prefix`; null when absent or not a marker. */
export function* readLocalMarker(io: Io, prefix: string): Generator<unknown, StoreMarker | null, unknown> {
  const text = (yield io.readText(markerPath(prefix))) as string | null;
  return text === null ? null : parseStoreMarker(text);
}
