/**
 * Batched reads: what many step directories hold (status, record, lease, job objects and their
 * ETags), from a few LIST requests instead of one GET per step.
 *
 * A store's steps live under one prefix (`{prefix}/{name}-{hash}/`, `{prefix}/{name}/{version}/`),
 * so one `ListObjectsV2` page (1,000 keys) covers hundreds of them. The directories wanted are sorted;
 * each request starts just before the first one not yet known (`StartAfter: dir + '.'`), which
 * skips the keys of directories nobody asked about. A directory is known once the listing has
 * passed its last metadata key (`.executor_status.lock`, the greatest of the four names), so
 * output files after it are never paged through. One directory alone is listed by the prefix
 * `dir + '.'` (its dot-files only).
 *
 * Concurrent requests for a few directories each (a runner re-checking the steps it just
 * leased, 64 at once) are coalesced: while a sweep is in flight, new directories wait and go
 * together in the next one.
 */
import { JOB_FILE, LEASE_FILE, RECORD_FILE, STATUS_FILE } from './layout.js';
import type { ObjectHead, S3Objects } from './objects.js';

/** The metadata objects of one step directory, as a LIST shows them (absent: undefined). */
export interface StepObjects {
  /** `.executor_status`. */
  status?: ObjectHead;
  /** `.artifact.json`. */
  record?: ObjectHead;
  /** `.executor_status.lock`. */
  lease?: ObjectHead;
  /** `.cairn/job.json`. */
  job?: ObjectHead;
}

/** The greatest metadata name: a listing past `dir + LAST` has shown all of `dir`'s metadata. */
const LAST = [STATUS_FILE, RECORD_FILE, LEASE_FILE, JOB_FILE].reduce((a, b) => (a > b ? a : b));
const FIELD: Readonly<Record<string, keyof StepObjects>> = { [STATUS_FILE]: 'status', [RECORD_FILE]: 'record', [LEASE_FILE]: 'lease', [JOB_FILE]: 'job' };

/** Directories per parallel segment of one large sweep. */
const SEGMENT = 400;
/** Above this many directories a request is swept on its own (not coalesced). */
const LARGE = 64;

const NAMES = Object.keys(FIELD);

/** The metadata file name `key` ends with (after a `/`), if any. */
function metadataName(key: string): string | undefined {
  for (const n of NAMES) if (key.endsWith(n) && key.charCodeAt(key.length - n.length - 1) === 47 /* / */) return n;
  return undefined;
}

function commonPrefix(a: string, b: string): string {
  let i = 0;
  while (i < a.length && i < b.length && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return a.slice(0, i);
}

interface Waiter {
  readonly resolve: (v: StepObjects) => void;
  readonly reject: (e: unknown) => void;
}

/** Lists step directories' metadata with few requests. */
export class StepLister {
  readonly #objects: S3Objects;
  /** bucket → dir → waiters of the next sweep. */
  #pending = new Map<string, Map<string, Waiter[]>>();
  #sweeping = false;

  constructor(objects: S3Objects) {
    this.#objects = objects;
  }

  /** What each of `dirs` (directory keys ending in `/`) holds, in order. */
  list(bucket: string, dirs: readonly string[]): Promise<StepObjects[]> {
    if (dirs.length > LARGE) return this.#sweep(bucket, dirs).then((m) => dirs.map((d) => m.get(d) ?? {}));
    let byDir = this.#pending.get(bucket);
    if (!byDir) this.#pending.set(bucket, (byDir = new Map()));
    const map = byDir;
    const out = Promise.all(
      dirs.map(
        (d) =>
          new Promise<StepObjects>((resolve, reject) => {
            const ws = map.get(d);
            if (ws) ws.push({ resolve, reject });
            else map.set(d, [{ resolve, reject }]);
          }),
      ),
    );
    if (!this.#sweeping) {
      this.#sweeping = true;
      // Let the requests made in this turn of the event loop join the first sweep.
      setImmediate(() => void this.#drain());
    }
    return out;
  }

  async #drain(): Promise<void> {
    while (this.#pending.size > 0) {
      const batch = this.#pending;
      this.#pending = new Map();
      await Promise.all(
        [...batch].map(async ([bucket, byDir]) => {
          try {
            const found = await this.#sweep(bucket, [...byDir.keys()]);
            for (const [d, ws] of byDir) for (const w of ws) w.resolve(found.get(d) ?? {});
          } catch (err) {
            for (const ws of byDir.values()) for (const w of ws) w.reject(err);
          }
        }),
      );
    }
    this.#sweeping = false;
  }

  /** Lists `dirs` of one bucket, in parallel segments of sorted directories. */
  async #sweep(bucket: string, dirs: readonly string[]): Promise<Map<string, StepObjects>> {
    const found = new Map<string, StepObjects>();
    for (const d of dirs) if (!found.has(d)) found.set(d, {});
    const sorted = [...found.keys()].sort();
    const segments: Promise<void>[] = [];
    for (let i = 0; i < sorted.length; i += SEGMENT) segments.push(this.#sweepSegment(bucket, sorted.slice(i, i + SEGMENT), found));
    await Promise.all(segments);
    return found;
  }

  /** Lists sorted `dirs` until each is known, under their longest common prefix. */
  async #sweepSegment(bucket: string, dirs: readonly string[], found: Map<string, StepObjects>): Promise<void> {
    const prefix = commonPrefix(dirs[0] as string, dirs[dirs.length - 1] as string);
    let i = 0;
    let cursor: string | undefined;
    while (i < dirs.length) {
      const d = dirs[i] as string;
      const alone = i === dirs.length - 1;
      const page = await this.#objects.list(bucket, alone ? { prefix: `${d}.`, startAfter: cursor } : { prefix, startAfter: cursor ?? `${d}.` });
      for (const o of page.objects) {
        const name = metadataName(o.key);
        if (name === undefined) continue;
        const entry = found.get(o.key.slice(0, o.key.length - name.length));
        if (entry !== undefined) entry[FIELD[name] as keyof StepObjects] = { etag: o.etag, size: o.size, lastModified: o.lastModified };
      }
      if (!page.truncated) {
        // The listing reached the end of its prefix: every directory it could show is known.
        i = alone ? i + 1 : dirs.length;
        cursor = undefined;
        continue;
      }
      const lastKey = page.objects.at(-1)?.key;
      if (lastKey === undefined) break; // a truncated page with no keys: nothing more to learn
      while (i < dirs.length && `${dirs[i] as string}${LAST}` <= lastKey) i++;
      cursor = i < dirs.length && (dirs[i] as string) < lastKey ? lastKey : undefined;
    }
  }
}
