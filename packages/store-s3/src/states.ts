/**
 * Step states from listings: the status token is known from its ETag alone (a status object
 * is one token written in one PUT, so its ETag is the MD5 of that token), and a record is read
 * only when it was asked for and this host has not cached that ETag. A warm step costs its
 * share of a LIST page; a status that is not a bare token (Marin's JSON-lines log, an encrypted
 * object whose ETag is not an MD5) is read with a GET.
 */
import { parseStatus, type RecordWant, recordWantAt, type StatusToken, type StoredState } from '@cairn/runner/store';
import { RECORD_FILE, STATUS_FILE } from './layout.js';
import { md5Hex } from './etag.js';
import { parseRecord } from './formats.js';
import type { StepLister, StepObjects } from './listing.js';
import type { S3Objects } from './objects.js';
import type { TextCache } from './text-cache.js';

const TOKENS: readonly StatusToken[] = ['SUCCESS', 'FAILED', 'RUNNING', 'DEP_FAILED', 'CANCELLED'];
const TOKEN_BY_ETAG: ReadonlyMap<string, StatusToken> = new Map(TOKENS.map((t) => [md5Hex(t), t]));

/** GETs in flight at once while reading states. */
const GET_PARALLELISM = 32;

/** One step directory of one bucket. */
export interface StepDir {
  /** Bucket. */
  readonly bucket: string;
  /** The directory's key, ending in `/`. */
  readonly dir: string;
}

/** Reads step states with {@link StepLister} and the record cache. */
export class StateReader {
  readonly #objects: S3Objects;
  readonly #lister: StepLister;
  readonly #cache: TextCache;
  /** Record GETs in flight, by bucket, key and ETag. */
  readonly #reading = new Map<string, Promise<string | null>>();

  constructor(objects: S3Objects, lister: StepLister, cache: TextCache) {
    this.#objects = objects;
    this.#lister = lister;
    this.#cache = cache;
  }

  /** The listing of each directory (grouped by bucket). */
  async listings(dirs: readonly StepDir[]): Promise<StepObjects[]> {
    const out = new Array<StepObjects>(dirs.length);
    const byBucket = new Map<string, number[]>();
    dirs.forEach((d, i) => {
      const g = byBucket.get(d.bucket);
      if (g) g.push(i);
      else byBucket.set(d.bucket, [i]);
    });
    await Promise.all(
      [...byBucket].map(async ([bucket, idx]) => {
        const found = await this.#lister.list(bucket, idx.map((i) => (dirs[i] as StepDir).dir));
        idx.forEach((i, k) => (out[i] = found[k] as StepObjects));
      }),
    );
    return out;
  }

  /** States of `dirs`; `withRecord[i]` also reads the record. Never throws for unusable objects. */
  async read(dirs: readonly StepDir[], withRecord: readonly RecordWant[] | RecordWant): Promise<StoredState[]> {
    const listed = await this.listings(dirs);
    const out = new Array<StoredState>(dirs.length);
    let next = 0;
    const worker = async () => {
      while (next < dirs.length) {
        const i = next++;
        // 'head' reads the whole record (a GET either way, usually none: the host's record cache).
        const want = recordWantAt(withRecord, i) !== false;
        try {
          out[i] = await this.#state(dirs[i] as StepDir, listed[i] as StepObjects, want);
        } catch (err) {
          out[i] = { status: null, problem: `unreadable (${(err as Error).message})` };
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(GET_PARALLELISM, dirs.length) }, worker));
    return out;
  }

  async #state(d: StepDir, o: StepObjects, want: boolean): Promise<StoredState> {
    let status: StatusToken | null = null;
    let problem: string | undefined;
    if (o.status !== undefined) {
      const known = TOKEN_BY_ETAG.get(o.status.etag);
      if (known !== undefined) status = known;
      else {
        const got = await this.#objects.get(d.bucket, d.dir + STATUS_FILE);
        const p = got === null ? { status: null, problem: undefined } : parseStatus(got.body.toString('utf8'));
        status = p.status;
        problem = p.problem;
      }
    }
    if (!want) return problem ? { status, problem } : { status };
    if (o.status === undefined || o.record === undefined) return problem ? { status, record: null, problem } : { status, record: null };
    const text = await this.recordText(d, o.record.etag);
    if (text === null) return problem ? { status, record: null, problem } : { status, record: null };
    const r = parseRecord(text);
    const pr = problem ?? r.problem;
    return pr ? { status, record: r.record, problem: pr } : { status, record: r.record };
  }

  /** Keeps a record this process wrote (its ETag from the PUT), so reading it back costs no GET. */
  remember(d: StepDir, etag: string, text: string): void {
    this.#cache.set(d.bucket, d.dir + RECORD_FILE, etag, text);
  }

  /** The record's text at `etag`, from the cache or one GET (shared by concurrent readers); null when it is gone. */
  async recordText(d: StepDir, etag: string): Promise<string | null> {
    const key = d.dir + RECORD_FILE;
    const cached = this.#cache.get(d.bucket, key, etag);
    if (cached !== undefined) return cached;
    const id = `${d.bucket}\n${key}\n${etag}`;
    let p = this.#reading.get(id);
    if (p === undefined) {
      p = (async () => {
        const got = await this.#objects.get(d.bucket, key);
        if (got === null) return null;
        const text = got.body.toString('utf8');
        this.#cache.set(d.bucket, key, got.etag, text);
        return text;
      })().finally(() => this.#reading.delete(id));
      this.#reading.set(id, p);
    }
    return p;
  }
}
