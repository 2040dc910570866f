/**
 * Stores by URL scheme. The built-in local store serves `file://` and plain paths; plugins
 * register factories that declare their schemes as data (`{ name: 's3', schemes: ['s3'], create }`),
 * exactly as executors register, so the runner names no plugin. One registry belongs to one
 * `StepRunner`; each factory's store is made when a prefix of its scheme is first used.
 */
import { CairnError, hasScheme } from '@cairn/core';
import { LocalStore, type LocalStoreOptions } from './store/local/store.js';
import type { Store, StoreFactory } from './store/store.js';

/** The built-in store factories. */
export const builtinStores: readonly StoreFactory[] = Object.freeze([{ name: 'local', schemes: ['file'], create: (o: unknown) => new LocalStore(o as LocalStoreOptions | undefined) }]);

/** The scheme of a prefix, lower-case (`s3` for `s3://b/x`); `file` for a plain path. */
export function schemeOf(prefix: string): string {
  return hasScheme(prefix) ? prefix.slice(0, prefix.indexOf('://')).toLowerCase() : 'file';
}

/** @internal The store factories of one runner, and the stores they made. */
export class StoreRegistry {
  readonly #byScheme = new Map<string, StoreFactory>();
  readonly #instances = new Map<string, Store>();
  readonly #options: Readonly<Record<string, unknown>>;

  constructor(extra: readonly StoreFactory[] | undefined, options: Readonly<Record<string, unknown>> = {}) {
    this.#options = options;
    for (const f of [...builtinStores, ...(extra ?? [])]) for (const s of f.schemes) this.#byScheme.set(s.toLowerCase(), f);
  }

  /** Registered schemes, as a user writes them (`file:// and plain paths`, `s3://`). */
  describe(): string {
    return [...this.#byScheme.keys()]
      .sort()
      .map((s) => (s === 'file' ? 'file:// and plain paths' : `${s}://`))
      .join(', ');
  }

  /** The store for `prefix` (made on first use). Throws `CAIRN_STORE` for a scheme no factory serves. */
  storeFor(prefix: string): Store {
    const scheme = schemeOf(prefix);
    const f = this.#byScheme.get(scheme);
    if (f === undefined) {
      throw new CairnError(
        'CAIRN_STORE',
        `No store is registered for the prefix ${prefix} (scheme ${scheme}://). Registered: ${this.describe()}. Register a store plugin for ${scheme}:// (new StepRunner({ stores: [factory] }), or stores in cairn.config.ts; e.g. s3StoreFactory() of @cairn/store-s3 for s3://), pass store: explicitly, or use a filesystem prefix.`,
      );
    }
    let store = this.#instances.get(f.name);
    if (store === undefined) {
      store = f.create(this.#options[f.name], prefix);
      this.#instances.set(f.name, store);
    }
    return store;
  }
}
