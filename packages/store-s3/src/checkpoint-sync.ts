/**
 * A step's checkpoint directory on an object store: a local directory (`ctx.checkpointDir`,
 * `$CAIRN_CHECKPOINT_DIR`) on the runner's host, synced with the step's checkpoint prefix in the
 * bucket (checkpoint-layout.ts).
 *
 * - **Pull** (`open`, when a run stages the step's first attempt): whether the step has
 *   checkpoints is listed (one LIST shared by the steps beside it: checkpoint-presence.ts); if it has, the
 *   head is read (one GET), the files it names are downloaded, each only while its object still has the ETag the head names
 *   (a file a zombie has since rewritten is left out, with a warning); then the head is
 *   rewritten as the next generation, conditionally on the ETag read. A step with none costs its
 *   share of the LIST and nothing more.
 * - **Push** (every `syncMs` while the step runs, again when the attempt ends — a retry is
 *   staged, or the step's status is committed, success or not — and when the store is closed):
 *   the directory's complete entries (a top-level name that does not start with `.`: write
 *   `.ckpt-4.tmp` and rename it to `ckpt-4`) whose size, mtime or inode changed are uploaded under
 *   this run's own keys (`{runId}/{n}/…`, never over a key the head names), then the head is
 *   replaced (`If-Match` the ETag this runner last wrote; `If-None-Match: *` for the first), then
 *   this run's keys the head no longer names are deleted. A push that found nothing changed sends
 *   nothing. A file being written is uploaded once it is renamed into place and the next poll sees it.
 * - **Fencing**: a conditional head write that fails means another runner wrote the head. The
 *   runner that holds the step's lease (one GET of the lease) writes its own head over it; one
 *   that does not stops syncing (`fenced`): nothing it writes afterwards is named by a head, so
 *   the runner that took the step over never resumes from it. A runner paused past its lease
 *   that wakes up pushes at most objects under its own keys, which nobody reads and the
 *   step's success removes.
 * - **After a runner restart** the bucket holds what the last push sent (at most `syncMs` old);
 *   the next run pulls it.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { lstat, mkdir, readdir, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { CairnError } from '@cairn/core';
import type { LeaseHolder } from '@cairn/runner/store';
import { CHECKPOINT_HEAD, type CheckpointFile, type CheckpointHead, checkpointPrefix, headText, parseHead } from './checkpoint-layout.js';
import { CheckpointPresence } from './checkpoint-presence.js';
import { statusOf } from './errors.js';
import { localFileOf } from './inputs.js';
import type { S3Objects } from './objects.js';
import { stepDir } from './primitives.js';
import { s3Url } from './url.js';

/** What the sync needs from its store. */
export interface CheckpointSyncHost {
  /** The store's objects. */
  readonly objects: S3Objects;
  /** True when the store already knows its lease of `path` is lost (a refresh or fence refused); no request. */
  leaseLost(path: string): boolean;
  /** Whether the lease object of `path` carries `token` now (one GET). */
  holdsLease(path: string, token: string): Promise<boolean>;
  /** Where warnings go. */
  warn(message: string): void;
}

/** A file of the current generation, with what this host saw of its local copy. */
interface Entry extends CheckpointFile {
  /** Local size, mtime and inode when it was pulled or pushed: a change makes the next push upload it. */
  readonly local: string;
}

/** One open checkpoint directory. */
interface Session {
  readonly path: string;
  readonly bucket: string;
  /** The checkpoint prefix (a directory key). */
  readonly prefix: string;
  readonly dir: string;
  readonly holder: LeaseHolder;
  generation: number;
  /** The ETag of the head as this runner last wrote or read it; null when there was none. */
  headEtag: string | null;
  entries: Map<string, Entry>;
  /** Keys this run uploaded (relative to the prefix), to delete once no head names them. */
  readonly own: Set<string>;
  pushes: number;
  timer: NodeJS.Timeout | undefined;
  /** The push in flight (pushes of one directory never overlap). */
  chain: Promise<void>;
  /** Another runner took the step over: nothing more is pushed. */
  fenced: boolean;
}

/** Downloads in flight while pulling. */
const PULLS = 4;
/** Tries of the pull's head switch before giving up (each failure means another runner wrote the head meanwhile). */
const OPEN_TRIES = 3;

const localId = (s: { size: number; mtimeMs: number; ino: number }) => `${s.size}:${s.mtimeMs}:${s.ino}`;

/** `CAIRN_CHECKPOINT` for a local checkpoint directory this host cannot make (the lifecycle adds the step's name). */
function localError(what: string, path: string, cause: unknown): CairnError {
  const code = (cause as NodeJS.ErrnoException).code ?? 'error';
  return new CairnError('CAIRN_CHECKPOINT', `cannot ${what} the checkpoint directory ${path} (${code}: ${(cause as Error).message}). Make the S3 store's localRoot writable (permissions, a full disk), or set another localRoot.`, { cause });
}

/** The files under `dir` whose top-level entry is complete (its name does not start with `.`), relative and `/`-separated. */
async function completeFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string, rel: string) => {
    for (const e of await readdir(d, { withFileTypes: true }).catch(() => [])) {
      if (rel === '' && e.name.startsWith('.')) continue;
      const r = rel === '' ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) await walk(join(d, e.name), r);
      else if (e.isFile()) out.push(r);
    }
  };
  await walk(dir, '');
  return out.sort();
}

/** Syncs the checkpoint directories of one S3 store's steps (see the module comment). */
export class CheckpointSync {
  readonly #host: CheckpointSyncHost;
  readonly #syncMs: number;
  readonly #sessions = new Map<string, Session>();
  readonly #presence: CheckpointPresence;

  constructor(host: CheckpointSyncHost, syncMs: number) {
    this.#host = host;
    this.#syncMs = syncMs;
    this.#presence = new CheckpointPresence(host.objects);
  }

  /** The local directory of `path` while it is open. */
  dirOf(path: string): string | undefined {
    return this.#sessions.get(path)?.dir;
  }

  /**
   * Opens the checkpoint directory of the step at `path` for `holder` in the local directory
   * `dir` (emptied first): pulls the current generation and starts the next (see the module
   * comment); then pushes every `syncMs` until {@link close}.
   */
  async open(path: string, holder: LeaseHolder, dir: string): Promise<string> {
    await this.close(path, 'drop');
    try {
      await rm(dir, { recursive: true, force: true });
      await mkdir(dir, { recursive: true, mode: 0o700 });
    } catch (err) {
      throw localError('create', dir, err);
    }
    const d = stepDir(path);
    const prefix = checkpointPrefix(d.dir);
    const s: Session = { path, bucket: d.bucket, prefix, dir, holder, generation: 0, headEtag: null, entries: new Map(), own: new Set(), pushes: 0, timer: undefined, chain: Promise.resolve(), fenced: false };
    for (let tries = 1; ; tries++) {
      const got = tries === 1 && !(await this.#presence.has(d.bucket, prefix)) ? null : await this.#host.objects.get(d.bucket, prefix + CHECKPOINT_HEAD);
      if (got === null) break;
      const head = parseHead(got.body.toString('utf8'));
      if (head === null) this.#host.warn(`${s3Url({ bucket: d.bucket, key: prefix + CHECKPOINT_HEAD })} is not a checkpoint head; the step starts without checkpoints and replaces it.`);
      const entries = head === null ? new Map<string, Entry>() : await this.#pull(s, head.files);
      const generation = (head?.generation ?? 0) + 1;
      const next: CheckpointHead = { cairn: 1, generation, run: holder.runId, files: [...entries.values()].map(fileOf) };
      const etag = await this.#host.objects.replaceIfMatch(d.bucket, prefix + CHECKPOINT_HEAD, headText(next), got.etag);
      if (etag !== null) {
        Object.assign(s, { generation, headEtag: etag, entries });
        break;
      }
      // A runner that lost the step pushed between the read and the switch: read again.
      if (tries === OPEN_TRIES) throw new CairnError('CAIRN_CHECKPOINT', `cannot open the checkpoints of ${path}: their head ${s3Url({ bucket: d.bucket, key: prefix + CHECKPOINT_HEAD })} changed ${OPEN_TRIES} times while they were pulled (another runner is still writing them). Stop the other runner, or retry.`, { retryable: true });
      await rm(dir, { recursive: true, force: true });
      await mkdir(dir, { recursive: true, mode: 0o700 });
    }
    this.#sessions.set(path, s);
    s.timer = setInterval(() => void this.#queue(s), this.#syncMs);
    s.timer.unref();
    return dir;
  }

  /** Pushes the checkpoint directory of `path` now (when the attempt ended); no-op when it is not open. */
  flush(path: string): Promise<void> {
    const s = this.#sessions.get(path);
    return s === undefined ? Promise.resolve() : this.#queue(s, true);
  }

  /**
   * Stops syncing the checkpoint directory of `path` and removes its local copy: `push` pushes it
   * a last time first (the attempt ended: a failure, a kept success); `drop` does not (the lease
   * is lost, or the checkpoints are about to be removed). Resolves with whether the bucket holds
   * checkpoints of the step (undefined: it was not open here).
   */
  async close(path: string, mode: 'push' | 'drop'): Promise<boolean | undefined> {
    const s = this.#sessions.get(path);
    if (s === undefined) return undefined;
    clearInterval(s.timer);
    s.timer = undefined;
    this.#sessions.delete(path);
    // A last push that fails leaves the bucket as the previous push left it (at most syncMs old).
    if (mode === 'push') await this.#queue(s, true).catch((err: unknown) => this.#host.warn(`The last push of the checkpoints of ${path} failed; the bucket keeps the previous one: ${err instanceof Error ? err.message : String(err)}`));
    else await s.chain;
    await rm(s.dir, { recursive: true, force: true });
    return s.headEtag !== null;
  }

  /**
   * Removes the step's checkpoints from the bucket (after its SUCCESS is published): the head
   * first, so that nobody resumes from a half-removed generation, then every object under the
   * prefix (other runs' leftovers too).
   */
  async remove(path: string): Promise<void> {
    const d = stepDir(path);
    const prefix = checkpointPrefix(d.dir);
    const { objects } = this.#host;
    await objects.delete(d.bucket, prefix + CHECKPOINT_HEAD);
    let token: string | undefined;
    do {
      const page = await objects.list(d.bucket, { prefix, continuationToken: token });
      for (const o of page.objects) await objects.delete(d.bucket, o.key);
      token = page.truncated ? page.next : undefined;
    } while (token !== undefined);
  }

  /** Stops every timer (the store is being destroyed); local copies stay for the next run's sweep. */
  stopAll(): void {
    for (const s of this.#sessions.values()) clearInterval(s.timer);
  }

  /** Queues a push of `s` after the one in flight; a poll's failure is a warning, a final push's is thrown. */
  #queue(s: Session, final = false): Promise<void> {
    const next = s.chain.then(() => this.#push(s));
    s.chain = next.catch((err: unknown) => {
      if (!final) this.#host.warn(`Pushing the checkpoints of ${s.path} failed (retried at the next poll): ${err instanceof Error ? err.message : String(err)}`);
    });
    return final ? next : s.chain;
  }

  /** Downloads `files` (relative to the prefix) into the session's directory; the entries downloaded. */
  async #pull(s: Session, files: readonly CheckpointFile[]): Promise<Map<string, Entry>> {
    const out = new Map<string, Entry>();
    let next = 0;
    const worker = async () => {
      while (next < files.length) {
        const f = files[next++] as CheckpointFile;
        const key = s.prefix + f.key;
        const file = localFileOf(s.dir, f.path, s.bucket, key);
        const tmp = `${file}.cairn-pull`;
        try {
          await mkdir(dirname(file), { recursive: true });
        } catch (err) {
          throw localError('fill', s.dir, err);
        }
        try {
          // Only the version the head names: a rewritten object is a zombie's write.
          const got = await this.#host.objects.client.send(new GetObjectCommand({ Bucket: s.bucket, Key: key, IfMatch: f.etag }));
          await pipeline(got.Body as Readable, createWriteStream(tmp));
        } catch (err) {
          await rm(tmp, { force: true });
          const st = statusOf(err);
          if (st === 412 || st === 404) {
            this.#host.warn(`Checkpoint file ${f.path} of ${s.path} is no longer the one its head names (${s3Url({ bucket: s.bucket, key })} ${st === 404 ? 'is gone' : 'was rewritten'}); the step resumes without it.`);
            continue;
          }
          throw this.#host.objects.error('download', s.bucket, key, err);
        }
        await rename(tmp, file);
        const local = await lstat(file);
        if (local.size !== f.size) throw new CairnError('CAIRN_STORE', `Downloaded checkpoint ${s3Url({ bucket: s.bucket, key })} has ${local.size} bytes, its head says ${f.size}; retry.`, { retryable: true });
        out.set(f.path, { ...f, local: localId(local) });
      }
    };
    await Promise.all(Array.from({ length: Math.min(PULLS, files.length) }, worker));
    return out;
  }

  /** One push (see the module comment). */
  async #push(s: Session): Promise<void> {
    if (s.fenced) return;
    const { objects } = this.#host;
    const names = await completeFiles(s.dir);
    const next = new Map<string, Entry>();
    let changed = false;
    const n = ++s.pushes;
    for (const rel of names) {
      const file = join(s.dir, ...rel.split('/'));
      const before = await lstat(file).catch(() => null);
      if (before === null || !before.isFile()) continue;
      const old = s.entries.get(rel);
      if (old !== undefined && old.local === localId(before)) {
        next.set(rel, old);
        continue;
      }
      if (this.#host.leaseLost(s.path)) return this.#fence(s);
      const key = `${s.holder.runId}/${n}/${rel}`;
      s.own.add(key);
      try {
        await new Upload({ client: objects.client, params: { Bucket: s.bucket, Key: s.prefix + key, Body: createReadStream(file) }, leavePartsOnError: false }).done();
      } catch (err) {
        throw objects.error('upload', s.bucket, s.prefix + key, err);
      }
      const after = await lstat(file).catch(() => null);
      const head = await objects.head(s.bucket, s.prefix + key);
      // Changed while uploading (or gone): the next poll takes it; the head keeps the old one.
      if (after === null || localId(after) !== localId(before) || head === null || head.size !== before.size) {
        if (old !== undefined) next.set(rel, old);
        continue;
      }
      next.set(rel, { path: rel, key, size: head.size, etag: head.etag, local: localId(before) });
      changed = true;
    }
    for (const rel of s.entries.keys()) if (!next.has(rel)) changed = true;
    if (!changed) return;
    const generation = Math.max(s.generation, 1);
    const text = headText({ cairn: 1, generation, run: s.holder.runId, files: [...next.values()].map(fileOf) });
    const headKey = s.prefix + CHECKPOINT_HEAD;
    let etag = s.headEtag === null ? await objects.createIfAbsent(s.bucket, headKey, text) : await objects.replaceIfMatch(s.bucket, headKey, text, s.headEtag);
    if (etag === null) {
      // Another runner wrote the head. Only the lease holder writes over it.
      if (this.#host.leaseLost(s.path) || !(await this.#host.holdsLease(s.path, s.holder.token))) return this.#fence(s);
      const now = await objects.head(s.bucket, headKey);
      etag = now === null ? await objects.createIfAbsent(s.bucket, headKey, text) : await objects.replaceIfMatch(s.bucket, headKey, text, now.etag);
      if (etag === null) return this.#fence(s);
    }
    s.headEtag = etag;
    s.generation = generation;
    s.entries = next;
    // This run's objects that no head names any more (a checkpoint the program deleted or rewrote).
    const named = new Set([...next.values()].map((e) => e.key));
    for (const key of [...s.own]) {
      if (named.has(key)) continue;
      s.own.delete(key);
      await objects.delete(s.bucket, s.prefix + key);
    }
  }

  #fence(s: Session): void {
    s.fenced = true;
    clearInterval(s.timer);
    this.#host.warn(`The checkpoints of ${s.path} are no longer this runner's (another runner took the step over): nothing more of them is pushed.`);
  }
}

function fileOf(e: Entry): CheckpointFile {
  return { path: e.path, key: e.key, size: e.size, etag: e.etag };
}

