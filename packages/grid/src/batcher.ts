/**
 * Collects ready steps of one shape until their batch is full or its first step has waited
 * `maxWaitMs`, then hands the batch over in one piece (to be submitted as one job array).
 */

/** Batches items by key. */
export interface Batcher<T> {
  /** Adds an item to its key's batch (flushing the batch when it is full). */
  add(key: string, item: T): void;
  /** Items waiting, over all keys. */
  readonly waiting: number;
  /** Removes and returns every waiting item (timers cleared), e.g. on stop. */
  drain(): T[];
}

interface Pending<T> {
  readonly items: T[];
  readonly timer: NodeJS.Timeout;
}

/** Creates a batcher that calls `flush(items)` for each full or expired batch. */
export function createBatcher<T>(options: { readonly capacity: number; readonly maxWaitMs: number; readonly flush: (items: T[]) => void }): Batcher<T> {
  const pending = new Map<string, Pending<T>>();
  let waiting = 0;
  const take = (key: string): T[] => {
    const p = pending.get(key);
    if (!p) return [];
    clearTimeout(p.timer);
    pending.delete(key);
    waiting -= p.items.length;
    return p.items;
  };
  return {
    add(key, item) {
      let p = pending.get(key);
      if (!p) {
        p = { items: [], timer: setTimeout(() => options.flush(take(key)), options.maxWaitMs) };
        pending.set(key, p);
      }
      p.items.push(item);
      waiting++;
      if (p.items.length >= options.capacity) options.flush(take(key));
    },
    get waiting() {
      return waiting;
    },
    drain() {
      return [...pending.keys()].flatMap((key) => take(key));
    },
  };
}
