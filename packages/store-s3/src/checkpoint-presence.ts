/**
 * Which steps have checkpoints in the bucket, found in batches: the questions asked in one
 * event-loop turn share one LIST per parent directory (`{parent}.`, by `/`), whose common
 * prefixes are the checkpoint prefixes there (checkpoint-layout.ts). A cold run of many steps
 * beside each other, or `cairn status` over a prefix, pays a fraction of a request per step for
 * the checkpoints most steps do not have, not a request each.
 */
import type { S3Objects } from './objects.js';

/** Batched presence checks of checkpoint prefixes. */
export class CheckpointPresence {
  readonly #objects: S3Objects;
  /** Listings about to start, by bucket and parent directory. */
  readonly #batches = new Map<string, Promise<Set<string>>>();

  constructor(objects: S3Objects) {
    this.#objects = objects;
  }

  /** Whether the checkpoint prefix `prefix` (a directory key) has objects. */
  has(bucket: string, prefix: string): Promise<boolean> {
    const parent = prefix.slice(0, prefix.lastIndexOf('/', prefix.length - 2) + 1);
    const id = `${bucket}/${parent}`;
    let batch = this.#batches.get(id);
    if (batch === undefined) {
      batch = new Promise<Set<string>>((resolve, reject) =>
        setImmediate(() => {
          this.#batches.delete(id);
          this.#list(bucket, parent).then(resolve, reject);
        }),
      );
      this.#batches.set(id, batch);
    }
    return batch.then((found) => found.has(prefix));
  }

  /** The `.`-prefixes directly under `parent` (full keys, with their trailing `/`). */
  async #list(bucket: string, parent: string): Promise<Set<string>> {
    const found = new Set<string>();
    let token: string | undefined;
    do {
      const page = await this.#objects.list(bucket, { prefix: `${parent}.`, delimiter: '/', continuationToken: token });
      for (const p of page.prefixes) found.add(p);
      token = page.truncated ? page.next : undefined;
    } while (token !== undefined);
    return found;
  }
}
