/**
 * The store a command reads, whatever holds it. The runner's registry picks the store by the
 * prefix's scheme (plugins come from `stores` in `cairn.config.ts`), and every store is read
 * through the store contract alone: its browser (`Store.browse`: find steps and leftovers, list,
 * read, write and remove files) and its methods (states, leases, attempt logs). The CLI knows no
 * store's file names or layout, so a new store needs nothing taught to the CLI.
 */
import { existsSync } from 'node:fs';
import { relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CairnError, hasScheme } from '@cairn/core';
import { parseUsage, RECORD_FILE, StepRunner, USAGE_FILE, type AttemptUsage, type ListedFile, type Store, type StoreBrowser } from '@cairn/runner';
import { requirePrefix, type EffectiveConfig } from './config.js';
import { cliError, usageError } from './errors.js';
import { storesOf } from './make-runner.js';
import type { CheckpointSummary } from './checkpoints.js';
import { MAX_DEPTH, recordFromText, type StoredStep } from './store-scan.js';

/** What a command reads and changes in a store. */
export interface StoreView {
  /** The store prefix. */
  readonly prefix: string;
  /** The store (states, leases, attempt logs). */
  readonly store: Store;
  /** True for a filesystem store (paths are local files). */
  readonly local: boolean;
  /** A lease not refreshed for this long is stale: the configured `leases.staleMs` (the runner's default, 90 s, when none). */
  readonly staleMs: number;
  /** Every step under the prefix: status, record, lease. */
  scan(): Promise<StoredStep[]>;
  /** Attempt directories dead runs left beside output paths (filesystem stores; an object store stages locally). */
  staged(): Promise<{ path: string; step: string }[]>;
  /** `path` relative to the prefix (`.` for the prefix itself). */
  rel(path: string): string;
  /** Text of one file of the store; null when absent. */
  readText(path: string): Promise<string | null>;
  /** Writes one whole file. */
  writeText(path: string, text: string): Promise<void>;
  /** Files under `dir`, recursively. */
  listFiles(dir: string): Promise<readonly ListedFile[]>;
  /** What the executor measured of an attempt (`usage.json` in its directory). */
  readUsage(attemptDir: string): Promise<AttemptUsage | null>;
  /** Removes a step's output or a staged directory; refuses anything outside the prefix. */
  remove(path: string): Promise<void>;
  /** The checkpoint directory beside the step's output at `path`; null when it has none (or the store keeps none). */
  checkpoints(path: string): Promise<CheckpointSummary | null>;
}

/** Removing `path` must never leave the prefix, whatever a scan returned: a usage error otherwise. */
export function insidePrefix(view: Pick<StoreView, 'prefix' | 'rel'>, path: string): void {
  const rel = view.rel(path);
  if (rel === '.' || rel.startsWith('..') || rel.startsWith(sep) || hasScheme(rel)) throw usageError(`Refusing to remove ${path}: it is not inside ${view.prefix}.`, 'Report this as a bug.');
}

/** A store, through its browser and the store contract alone (any store: local, memory, object stores). */
function browsedView(prefix: string, store: Store, browse: StoreBrowser, staleMs: number): StoreView {
  const base = prefix.replace(/\/+$/, '');
  const text = async (path: string) => {
    const bytes = await browse.readFile(path);
    return bytes === null ? null : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  };
  const view: StoreView = {
    prefix,
    store,
    local: store.kind === 'local',
    staleMs,
    async scan() {
      const found = await browse.findSteps(prefix, MAX_DEPTH);
      const paths = found.map((f) => f.path);
      const states = await store.readStates(paths, true);
      const leases = await Promise.all(found.map((f) => (f.leased ? store.readLease(f.path) : null)));
      const out: StoredStep[] = [];
      for (let i = 0; i < found.length; i++) {
        const path = paths[i] as string;
        const s = states[i] as (typeof states)[number];
        let record = s.record ?? null;
        // readStates reads a record only next to a status; a failed first attempt may leave only a record.
        if (record === null && s.status === null) record = recordFromText(await text(`${path}/${RECORD_FILE}`));
        out.push({ path, rel: view.rel(path), status: s.status, record, lease: leases[i] ?? null, problem: s.problem });
      }
      return out;
    },
    staged: async () => [...((await browse.findLeftovers?.(prefix, MAX_DEPTH)) ?? [])],
    rel: (path) => (store.kind === 'local' ? relative(prefix, path) || '.' : path === base ? '.' : path.startsWith(`${base}/`) ? path.slice(base.length + 1) : path),
    readText: text,
    writeText: (path, t) => browse.writeFile(path, t),
    listFiles: (dir) => browse.listFiles(dir),
    async readUsage(attemptDir) {
      const t = await text(`${attemptDir}/${USAGE_FILE}`);
      return t === null ? null : parseUsage(t);
    },
    async remove(path) {
      insidePrefix(view, path);
      await browse.remove(path);
    },
    checkpoints: async (path) => (await browse.checkpoints?.(path)) ?? null,
  };
  return view;
}

/**
 * The store of the configured prefix, as the runner would pick it. A store that is not on this
 * filesystem is checked first (`connect`: the endpoint answers, the credentials work, the bucket
 * exists), so a command fails with one clear error before it reads anything.
 */
export async function openStore(config: EffectiveConfig): Promise<StoreView> {
  const prefix = requirePrefix(config);
  const store = new StepRunner({ prefix, ...storesOf(config), ...(config.leases !== undefined ? { leases: config.leases } : {}) }).store;
  const staleMs = config.leaseTiming.staleMs;
  if (store.kind === 'local' && !existsSync(prefix.startsWith('file://') ? fileURLToPath(prefix) : prefix)) {
    throw cliError('CAIRN_NO_STORE', `The store prefix ${prefix} does not exist.`, 'Check --prefix / CAIRN_PREFIX, or run a pipeline first.');
  }
  await store.connect?.(prefix);
  if (store.browse === undefined) {
    throw new CairnError('CAIRN_STORE', `The ${store.kind} store of ${prefix} cannot be browsed (it offers no browse), so the CLI cannot list what it holds. Use a store plugin that implements Store.browse.`);
  }
  return browsedView(prefix, store, store.browse, staleMs);
}
