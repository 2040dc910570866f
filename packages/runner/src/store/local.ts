/**
 * The filesystem store. Layout per step (the directory is the step's output path):
 *
 * ```
 * {outputPath}/.executor_status        one token: SUCCESS | FAILED | DEP_FAILED | CANCELLED (Marin's format)
 * {outputPath}/.artifact.json          the record (JSON), written before the status
 * {outputPath}/.executor_status.lock   the lease, while a runner works on the step
 * {outputPath}/.cairn/logs/attempt-N.{stdout,stderr}
 * {outputPath}/.cairn/job.json         the job in flight of a resumable executor (adopted after a restart)
 * ```
 *
 * Every write is atomic (temp file + rename). Small files are read and written with
 * synchronous calls by default (`io: 'sync'`): on a local disk this is 2–4× faster than a
 * thread-pool round trip per call. Use `io: 'async'` on network filesystems, where a slow
 * call must not stall the event loop.
 */
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { CairnError } from '@cairn/core';
import { LEASE_FILE, type LeaseHolder, type LeaseInfo, parseHolder } from './leases.js';
import { JOB_FILE, parseJobRecord, parseRecord, RECORD_FILE, type ArtifactRecord, type JobRecord } from './records.js';
import { parseStatus, STATUS_FILE, type StatusToken } from './status.js';
import { type AttemptFiles, mirrorsAsync, type Store, type StoredState, type SyncStoreOps } from './store.js';

/** Options of {@link LocalStore}. */
export interface LocalStoreOptions {
  /** `sync`: fast on local disks; `async`: keeps the event loop free on network filesystems. @default 'sync' */
  readonly io?: 'sync' | 'async';
  /** Reads in flight at once in `async` mode. @default 64 */
  readonly readParallelism?: number;
}

function isMissing(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

const SCRATCH = Buffer.allocUnsafe(64 * 1024);
let tmpCounter = 0;
function tmpName(file: string): string {
  return `${file}.tmp-${process.pid}-${++tmpCounter}`;
}

function storeError(what: string, path: string, cause: unknown): CairnError {
  return new CairnError('CAIRN_STORE', `Cannot ${what} ${path}: ${(cause as Error).message ?? String(cause)}. Check the store prefix is writable.`, { cause });
}

function checkLocal(path: string): string {
  if (path.startsWith('file://')) return new URL(path).pathname;
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(path)) {
    throw new CairnError('CAIRN_STORE', `The local store cannot hold ${path}; use a store for that scheme, or a filesystem prefix.`);
  }
  return path;
}

/** The default store: the local (or shared POSIX) filesystem. */
export class LocalStore implements Store {
  readonly kind = 'local';
  /** The synchronous operations (`io: 'sync'` only; not offered to a subclass that overrides the async ones). */
  readonly sync: SyncStoreOps | undefined;
  readonly #sync: boolean;
  readonly #parallel: number;

  constructor(options: LocalStoreOptions = {}) {
    this.#sync = (options.io ?? 'sync') === 'sync';
    this.#parallel = options.readParallelism ?? 64;
    this.sync = this.#sync && mirrorsAsync(this, LocalStore)
      ? {
          readStatesSync: (paths, withRecord) => this.#readStatesSync(paths, withRecord),
          prepareSync: (path) => this.#prepareSync(path),
          createLeaseSync: (path, holder) => this.#createLeaseSync(path, holder),
          commitSync: (path, status, record) => this.#commitSync(path, status, record),
          removeLeaseSync: (path) => this.#removeSync(join(checkLocal(path), LEASE_FILE), 'the lease'),
        }
      : undefined;
  }

  #readOneSync(path: string, want: boolean): StoredState {
    const dir = checkLocal(path);
    try {
      const statusText = this.#readText(join(dir, STATUS_FILE));
      const recordText = want && statusText !== null ? this.#readText(join(dir, RECORD_FILE)) : want ? null : undefined;
      return this.#stateFrom(statusText, recordText);
    } catch (err) {
      return { status: null, problem: `unreadable (${(err as Error).message})` };
    }
  }

  #readStatesSync(paths: readonly string[], withRecord: readonly boolean[] | boolean): StoredState[] {
    const out = new Array<StoredState>(paths.length);
    for (let i = 0; i < paths.length; i++) out[i] = this.#readOneSync(paths[i] as string, typeof withRecord === 'boolean' ? withRecord : withRecord[i] === true);
    return out;
  }

  #prepareSync(path: string): boolean {
    const dir = checkLocal(path);
    try {
      // mkdir -p returns the first directory it created: undefined when `dir` already existed.
      return fs.mkdirSync(dir, { recursive: true }) !== undefined;
    } catch (err) {
      throw storeError('create', dir, err);
    }
  }

  #atomicWriteSync(file: string, text: string): void {
    const tmp = tmpName(file);
    fs.writeFileSync(tmp, text);
    fs.renameSync(tmp, file);
  }

  #commitSync(path: string, status: StatusToken, record?: ArtifactRecord, retried = false): void {
    const dir = checkLocal(path);
    try {
      if (record !== undefined) this.#atomicWriteSync(join(dir, RECORD_FILE), `${JSON.stringify(record, null, 2)}\n`);
      this.#atomicWriteSync(join(dir, STATUS_FILE), status);
    } catch (err) {
      if (isMissing(err) && !retried) {
        // The step removed its own output directory: recreate it once.
        this.#prepareSync(dir);
        this.#commitSync(path, status, record, true);
        return;
      }
      throw storeError('write the status of', dir, err);
    }
  }

  #createLeaseSync(path: string, holder: LeaseHolder): boolean {
    const file = join(checkLocal(path), LEASE_FILE);
    try {
      fs.writeFileSync(file, JSON.stringify(holder), { flag: 'wx' });
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw storeError('create the lease', file, err);
    }
  }

  #removeSync(file: string, what: string): void {
    try {
      fs.unlinkSync(file);
    } catch (err) {
      if (!isMissing(err)) throw storeError(`remove ${what}`, file, err);
    }
  }

  #readText(file: string): string | null {
    // open + one read into a shared buffer + close: no fstat and no allocation for small files.
    let fd: number;
    try {
      fd = fs.openSync(file, 'r');
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
    try {
      const n = fs.readSync(fd, SCRATCH, 0, SCRATCH.length, 0);
      if (n < SCRATCH.length) return SCRATCH.toString('utf8', 0, n);
      return fs.readFileSync(fd, 'utf8');
    } finally {
      fs.closeSync(fd);
    }
  }

  async #readTextAsync(file: string): Promise<string | null> {
    if (this.#sync) return this.#readText(file);
    try {
      return await fsp.readFile(file, 'utf8');
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }

  #stateFrom(statusText: string | null, recordText: string | null | undefined): StoredState {
    let status: StatusToken | null = null;
    let problem: string | undefined;
    if (statusText !== null) {
      const p = parseStatus(statusText);
      status = p.status;
      problem = p.problem;
    }
    if (recordText === undefined) return problem ? { status, problem } : { status };
    if (recordText === null) return problem ? { status, record: null, problem } : { status, record: null };
    const r = parseRecord(recordText);
    const pr = problem ?? r.problem;
    return pr ? { status, record: r.record, problem: pr } : { status, record: r.record };
  }

  async readStates(paths: readonly string[], withRecord: readonly boolean[] | boolean): Promise<StoredState[]> {
    const want = (i: number) => (typeof withRecord === 'boolean' ? withRecord : withRecord[i] === true);
    const out = new Array<StoredState>(paths.length);
    const readOne = async (i: number) => {
      const dir = checkLocal(paths[i] as string);
      try {
        const statusText = await this.#readTextAsync(join(dir, STATUS_FILE));
        const recordText = want(i) && statusText !== null ? await this.#readTextAsync(join(dir, RECORD_FILE)) : want(i) ? null : undefined;
        out[i] = this.#stateFrom(statusText, recordText);
      } catch (err) {
        out[i] = { status: null, problem: `unreadable (${(err as Error).message})` };
      }
    };
    if (this.#sync) return this.#readStatesSync(paths, withRecord);
    let next = 0;
    const worker = async () => {
      while (next < paths.length) await readOne(next++);
    };
    await Promise.all(Array.from({ length: Math.min(this.#parallel, paths.length) }, worker));
    return out;
  }

  async checkWritable(prefix: string): Promise<void> {
    const dir = checkLocal(prefix);
    const probe = join(dir, tmpName('.cairn-write-probe'));
    try {
      await fsp.mkdir(dir, { recursive: true });
      await fsp.writeFile(probe, '', { flag: 'wx' });
      await fsp.unlink(probe);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'error';
      throw new CairnError(
        'CAIRN_STORE',
        `The store at ${dir} is not writable (${code}: ${(err as Error).message}). Nothing was run. Make it writable (permissions, a read-only mount, a full disk), or choose another prefix (--prefix or CAIRN_PREFIX).`,
        { cause: err },
      );
    }
  }

  async prepare(path: string): Promise<void> {
    if (this.#sync) {
      this.#prepareSync(path);
      return;
    }
    const dir = checkLocal(path);
    try {
      await fsp.mkdir(dir, { recursive: true });
    } catch (err) {
      throw storeError('create', dir, err);
    }
  }

  async #atomicWrite(file: string, text: string): Promise<void> {
    const tmp = tmpName(file);
    if (this.#sync) {
      fs.writeFileSync(tmp, text);
      fs.renameSync(tmp, file);
    } else {
      await fsp.writeFile(tmp, text);
      await fsp.rename(tmp, file);
    }
  }

  async commit(path: string, status: StatusToken, record?: ArtifactRecord, retried = false): Promise<void> {
    if (this.#sync) {
      this.#commitSync(path, status, record);
      return;
    }
    const dir = checkLocal(path);
    try {
      if (record !== undefined) await this.#atomicWrite(join(dir, RECORD_FILE), `${JSON.stringify(record, null, 2)}\n`);
      await this.#atomicWrite(join(dir, STATUS_FILE), status);
    } catch (err) {
      if (isMissing(err) && !retried) {
        // The step removed its own output directory: recreate it once.
        await this.prepare(dir);
        return this.commit(path, status, record, true);
      }
      throw storeError('write the status of', dir, err);
    }
  }

  async createLease(path: string, holder: LeaseHolder): Promise<boolean> {
    const file = join(checkLocal(path), LEASE_FILE);
    const text = JSON.stringify(holder);
    try {
      if (this.#sync) fs.writeFileSync(file, text, { flag: 'wx' });
      else await fsp.writeFile(file, text, { flag: 'wx' });
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw storeError('create the lease', file, err);
    }
  }

  async readLease(path: string): Promise<LeaseInfo | null> {
    const file = join(checkLocal(path), LEASE_FILE);
    try {
      const raw = await this.#readTextAsync(file);
      if (raw === null) return null;
      const mtimeMs = this.#sync ? fs.statSync(file).mtimeMs : (await fsp.stat(file)).mtimeMs;
      return { holder: parseHolder(raw), raw, mtimeMs };
    } catch (err) {
      if (isMissing(err)) return null;
      throw storeError('read the lease', file, err);
    }
  }

  async writeLease(path: string, holder: LeaseHolder): Promise<void> {
    await this.#atomicWrite(join(checkLocal(path), LEASE_FILE), JSON.stringify(holder));
  }

  /** Deletes `file`; no error when it is absent. */
  async #remove(file: string, what: string): Promise<void> {
    try {
      if (this.#sync) fs.unlinkSync(file);
      else await fsp.unlink(file);
    } catch (err) {
      if (!isMissing(err)) throw storeError(`remove ${what}`, file, err);
    }
  }

  async removeLease(path: string): Promise<void> {
    await this.#remove(join(checkLocal(path), LEASE_FILE), 'the lease');
  }

  async breakLease(path: string, observed: LeaseInfo): Promise<boolean> {
    // Move the lease aside atomically, then check we moved the stale one we saw; if a fresh
    // lease was created meanwhile, put it back with link() (which never overwrites).
    const file = join(checkLocal(path), LEASE_FILE);
    const aside = tmpName(`${file}.stale`);
    try {
      await fsp.rename(file, aside);
    } catch (err) {
      if (isMissing(err)) return false;
      throw storeError('take over the lease', file, err);
    }
    const raw = await fsp.readFile(aside, 'utf8').catch(() => null);
    if (raw !== observed.raw) {
      await fsp.link(aside, file).catch(() => undefined);
      await fsp.unlink(aside).catch(() => undefined);
      return false;
    }
    await fsp.unlink(aside).catch(() => undefined);
    return true;
  }

  async writeJob(path: string, job: JobRecord): Promise<void> {
    const file = join(checkLocal(path), JOB_FILE);
    try {
      if (this.#sync) fs.mkdirSync(dirname(file), { recursive: true });
      else await fsp.mkdir(dirname(file), { recursive: true });
      await this.#atomicWrite(file, `${JSON.stringify(job, null, 2)}\n`);
    } catch (err) {
      throw storeError('record the running job in', file, err);
    }
  }

  async readJob(path: string): Promise<JobRecord | null> {
    const text = await this.#readTextAsync(join(checkLocal(path), JOB_FILE)).catch(() => null);
    return text === null ? null : parseJobRecord(text);
  }

  async removeJob(path: string): Promise<void> {
    await this.#remove(join(checkLocal(path), JOB_FILE), 'the job record');
  }

  attemptFiles(path: string, attempt: number): AttemptFiles {
    const base = checkLocal(path);
    return { stdout: `${base}/.cairn/logs/attempt-${attempt}.stdout`, stderr: `${base}/.cairn/logs/attempt-${attempt}.stderr`, dir: `${base}/.cairn/attempt-${attempt}` };
  }
}
