/**
 * The default store: the local (or a shared POSIX) filesystem. Layout: layout.ts; leases:
 * lease-ops.ts; staged outputs and fenced commits: commit-ops.ts.
 *
 * Small files are read and written with synchronous calls by default (`io: 'sync'`): on a local
 * disk that is 2–4× faster than a thread-pool round trip per call, and a step's whole lifecycle
 * then finishes on the runner's stack. Use `io: 'async'` on network filesystems, where a slow
 * call must not stall the event loop. Both run the same operations (io.ts).
 */
import { drive, isPromise, type Maybe } from '../../maybe.js';
import type { LeaseHolder, LeaseInfo } from '../leases.js';
import { parseJobRecord, type JobRecord } from '../records.js';
import type { AttemptLogs, CommitRequest, RecordWant, StagedAttempt, Store, StoreCapabilities, StoredState } from '../store.js';
import { recordWantAt } from '../record-want.js';
import { abandon, attemptLogs, commit, stage, sweep } from './commit-ops.js';
import { newGeneration } from './checkpoint-ops.js';
import { storeError } from './errors.js';
import { asyncIo, type Io, syncIo } from './io.js';
import { jobFile, localPath, parentOf, tmpName } from './layout.js';
import { checkStepDir } from './safe-dirs.js';
import { breakLease, createLease, readLease, refreshLease, releaseLease } from './lease-ops.js';
import { BATCH_MIN } from './batch-read.js';
import { readOne, readStatesParallel } from './read-ops.js';
import { CairnError } from '@cairn/core';
import { markLocalStore, readLocalMarker, type StoreMarker } from '../marker.js';
import { LocalBrowser } from './browse.js';

/** Options of {@link LocalStore}. */
export interface LocalStoreOptions {
  /** `sync`: fast on local disks; `async`: keeps the event loop free on network filesystems. @default 'sync' */
  readonly io?: 'sync' | 'async';
  /** Reads in flight at once in `async` mode. @default 64 */
  readonly readParallelism?: number;
}

const CAPABILITIES: StoreCapabilities = Object.freeze({ staging: 'rename' });

/** The local filesystem store. */
export class LocalStore implements Store {
  readonly kind = 'local';
  readonly capabilities = CAPABILITIES;
  /** How tools (the CLI) find and read what the store holds. */
  readonly browse: LocalBrowser = new LocalBrowser();
  readonly #io: Io;
  readonly #parallel: number;
  /** Prefixes of runs on this store (connect): directories below them are checked before the store writes there. */
  readonly #prefixes = new Set<string>();
  /** Parent directories already checked (not links, not files). */
  readonly #checked = new Set<string>();

  constructor(options: LocalStoreOptions = {}) {
    this.#io = (options.io ?? 'sync') === 'sync' ? syncIo : asyncIo;
    this.#parallel = options.readParallelism ?? 64;
  }

  readStates(paths: readonly string[], withRecord: readonly RecordWant[] | RecordWant): Maybe<StoredState[]> {
    const io = this.#io;
    const want = (i: number) => recordWantAt(withRecord, i);
    if (paths.length >= BATCH_MIN) {
      const states = readStatesParallel(paths, want);
      if (states !== undefined) return states;
    }
    const out = new Array<StoredState>(paths.length);
    if (io === syncIo) {
      for (let i = 0; i < paths.length; i++) out[i] = drive(readOne(io, paths[i] as string, want(i))) as StoredState;
      return out;
    }
    let next = 0;
    const worker = async () => {
      while (next < paths.length) {
        const i = next++;
        out[i] = await drive(readOne(io, paths[i] as string, want(i)));
      }
    };
    return Promise.all(Array.from({ length: Math.min(this.#parallel, paths.length) }, worker)).then(() => out);
  }

  list(dir: string): Maybe<readonly string[]> {
    const names = this.#io.readdir(localPath(dir));
    const visible = (all: readonly string[]) => all.filter((n) => !n.startsWith('.'));
    return isPromise(names) ? names.then(visible) : visible(names);
  }

  connect(prefix: string): Maybe<void> {
    this.#prefixes.add(localPath(prefix));
  }

  checkWritable(prefix: string): Maybe<void> {
    const io = this.#io;
    const dir = localPath(prefix);
    return drive(
      (function* () {
        try {
          yield io.mkdir(dir, true);
          yield io.accessWrite(dir);
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code ?? 'error';
          throw new CairnError(
            'CAIRN_STORE',
            `The store at ${dir} is not writable (${code}: ${(err as Error).message}). Make it writable (permissions, a read-only mount, a full disk), or choose another prefix (--prefix or CAIRN_PREFIX).`,
            { cause: err },
          );
        }
      })(),
    );
  }

  markStore(prefix: string): Maybe<void> {
    return drive(markLocalStore(this.#io, localPath(prefix)));
  }

  readMarker(prefix: string): Maybe<StoreMarker | null> {
    return drive(readLocalMarker(this.#io, localPath(prefix)));
  }

  createLease(path: string, holder: LeaseHolder): Maybe<boolean> {
    const dir = localPath(path);
    const parent = parentOf(dir);
    if (this.#checked.has(parent) || this.#prefixes.has(parent)) return drive(createLease(this.#io, dir, holder));
    // A step below a directory of its own (name/version, a nested pin): the store writes beside
    // the step, so the directories on the way must not lead out of the store.
    return drive(this.#checkedLease(dir, parent, holder));
  }

  *#checkedLease(dir: string, parent: string, holder: LeaseHolder): Generator<unknown, boolean, unknown> {
    for (const prefix of this.#prefixes) yield* checkStepDir(this.#io, prefix, parent);
    // The lease is written into this directory next; made first, a step in a directory of its
    // own (name/version) does not fail a write on the missing directory, thrown as an Error with
    // its stack, before the lease makes it (bench row files-10k).
    yield this.#io.mkdir(parent, true);
    this.#checked.add(parent);
    return yield* createLease(this.#io, dir, holder);
  }

  readLease(path: string): Maybe<LeaseInfo | null> {
    return drive(readLease(this.#io, localPath(path)));
  }

  refreshLease(path: string, holder: LeaseHolder): Maybe<boolean> {
    const dir = localPath(path);
    return this.#rechecked(dir, refreshLease(this.#io, dir, holder));
  }

  breakLease(path: string, observed: LeaseInfo): Maybe<boolean> {
    return drive(breakLease(this.#io, localPath(path), observed));
  }

  releaseLease(path: string, holder: LeaseHolder): Maybe<void> {
    const dir = localPath(path);
    return this.#rechecked(dir, releaseLease(this.#io, dir, holder));
  }

  stage(path: string, holder: LeaseHolder, attempt: number, previous?: StagedAttempt): Maybe<StagedAttempt> {
    return drive(stage(this.#io, localPath(path), holder, attempt, previous));
  }

  openCheckpoints(staged: StagedAttempt, holder: LeaseHolder): string {
    // Always synchronous (the step's getter waits): a few calls on the store's own filesystem.
    return drive(newGeneration(syncIo, localPath(staged.path), holder)) as string;
  }

  commit(path: string, holder: LeaseHolder, request: CommitRequest): Maybe<void> {
    const dir = localPath(path);
    return this.#rechecked(dir, commit(this.#io, dir, holder, request, request.release === true));
  }

  /**
   * `op` on the step at `dir`, after checking again the directories between a prefix and it
   * (none for a step directly under a prefix): they may have been swapped for a link while the
   * step ran, and the store would then write (publish, rewrite or remove a lease) outside the
   * store. What is left is the moment between this check and the operation: Node has no
   * `renameat` relative to a directory held open.
   */
  #rechecked<T>(dir: string, op: Generator<unknown, T, unknown>): Maybe<T> {
    const parent = parentOf(dir);
    if (this.#prefixes.has(parent)) return drive(op);
    const io = this.#io;
    const prefixes = this.#prefixes;
    return drive(
      (function* () {
        for (const prefix of prefixes) yield* checkStepDir(io, prefix, parent);
        return yield* op;
      })(),
    );
  }

  abandon(staged: StagedAttempt): Maybe<void> {
    return drive(abandon(this.#io, staged));
  }

  sweep(path: string, keep?: StagedAttempt): Maybe<void> {
    return drive(sweep(this.#io, localPath(path), keep));
  }

  writeJob(path: string, job: JobRecord): Maybe<void> {
    const io = this.#io;
    const file = jobFile(localPath(path));
    return drive(
      (function* () {
        const tmp = tmpName(file);
        try {
          yield io.writeText(tmp, `${JSON.stringify(job, null, 2)}\n`);
          yield io.rename(tmp, file);
        } catch (err) {
          yield io.unlink(tmp);
          throw storeError('record the running job in', file, err);
        }
      })(),
    );
  }

  readJob(path: string): Maybe<JobRecord | null> {
    const io = this.#io;
    const file = jobFile(localPath(path));
    return drive(
      (function* () {
        try {
          const text = (yield io.readText(file)) as string | null;
          return text === null ? null : parseJobRecord(text);
        } catch {
          return null;
        }
      })(),
    );
  }

  removeJob(path: string): Maybe<void> {
    const io = this.#io;
    const file = jobFile(localPath(path));
    return drive(
      (function* () {
        try {
          yield io.unlink(file);
        } catch (err) {
          throw storeError('remove the job record', file, err);
        }
      })(),
    );
  }

  attemptLogs(path: string): Maybe<readonly AttemptLogs[]> {
    return drive(attemptLogs(this.#io, localPath(path)));
  }
}
