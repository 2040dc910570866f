/**
 * The local store's leases: the file `{parent}/.{base}.cairn-lease` beside the output
 * directory (see layout.ts), holding a LeaseHolder as JSON.
 *
 * - create: the holder is written to a temporary file first and published with link(2), which
 *   fails when a lease exists: one winner, and a lease file is never empty or half-written.
 * - refresh: only while the file still holds our token; the new content replaces it by rename.
 * - takeover (break): the stale file is renamed aside and compared with what was read; a lease
 *   created meanwhile is put back with link(2), so two takers cannot both win.
 * - release: only while the file still holds our token (read, compare, unlink).
 * The window left between a compare and the rename or unlink that follows it is a few
 * microseconds of this process's own calls; README "Leases" says what it can and cannot do.
 *
 * Marin's lock, `{dir}/.executor_status.lock`, is honoured too, for stores Marin and Cairn share:
 * a lease just created is given up again when a Marin lock is found beside it, and a read with
 * no Cairn lease returns the Marin lock, so the runner waits on it and takes it over when stale
 * (its timestamp is epoch seconds, refreshed every 30 s by Marin).
 *
 * A lease's age is measured on the store's clock, not the reader's: a probe file is written beside
 * the lease and its mtime (set by whoever keeps the filesystem: the kernel, an NFS server) is the
 * store's "now", compared with the lease file's mtime. Each refresh rewrites the file, so its mtime
 * is the time of the holder's last refresh on that same clock.
 */
import { CairnError } from '@cairn/core';
import { type LeaseHolder, type LeaseInfo, parseHolder } from '../leases.js';
import { storeError } from './errors.js';
import { isMissing, type Io } from './io.js';
import { leaseFile, marinLockFile, parentOf, tmpName } from './layout.js';

type Op<T> = Generator<unknown, T, unknown>;

/**
 * Writes `text` to a new temporary file beside `file` (creating the parent directory once if
 * missing); returns its name. A write that fails (a full disk) removes the file it created.
 */
function* writeTemp(io: Io, file: string, text: string): Op<string> {
  const tmp = tmpName(file);
  try {
    try {
      yield io.writeText(tmp, text);
    } catch (err) {
      if (!isMissing(err)) throw err;
      yield io.mkdir(parentOf(file), true);
      yield io.writeText(tmp, text);
    }
  } catch (err) {
    yield* unlinkQuietly(io, tmp);
    throw storeError('write the lease', tmp, err);
  }
  return tmp;
}

/** Removes a temporary file, whatever happens (it may not exist). */
function* unlinkQuietly(io: Io, file: string): Op<void> {
  try {
    yield io.unlink(file);
  } catch {
    // Already gone, or the directory is unreadable: nothing more can be done.
  }
}

export function* createLease(io: Io, dir: string, holder: LeaseHolder): Op<boolean> {
  const file = leaseFile(dir);
  const tmp = yield* writeTemp(io, file, JSON.stringify(holder));
  let won: boolean;
  try {
    won = (yield io.link(tmp, file)) as boolean;
  } catch (err) {
    throw storeError('create the lease', file, err);
  } finally {
    yield* unlinkQuietly(io, tmp);
  }
  if (!won) return false;
  // A Marin runner holds the step: give ours up; the read that follows finds its lock.
  if ((yield* readText(io, marinLockFile(dir), true)) === null) return true;
  yield* unlinkLease(io, dir);
  return false;
}

/** A file's text, or null when it does not exist (`rare`: it usually does not). */
function* readText(io: Io, file: string, rare = false): Op<string | null> {
  try {
    return (yield rare ? io.probeText(file) : io.readText(file)) as string | null;
  } catch (err) {
    if (isMissing(err)) return null;
    throw storeError('read the lease', file, err);
  }
}

export function* readLease(io: Io, dir: string): Op<LeaseInfo | null> {
  const file = leaseFile(dir);
  return (yield* readLeaseAt(io, file, file)) ?? (yield* readLeaseAt(io, marinLockFile(dir), file));
}

function* readLeaseAt(io: Io, file: string, clockBeside: string): Op<LeaseInfo | null> {
  let raw: string | null;
  let st: { mtimeMs: number } | null;
  try {
    raw = (yield io.readText(file)) as string | null;
    if (raw === null) return null;
    st = (yield io.lstat(file)) as { mtimeMs: number } | null;
  } catch (err) {
    if (isMissing(err)) return null;
    throw storeError('read the lease', file, err);
  }
  const info: LeaseInfo = { holder: parseHolder(raw), raw, mtimeMs: st?.mtimeMs ?? Date.now(), location: file };
  if (st === null) return info;
  const now = yield* storeNow(io, clockBeside);
  return now === undefined ? info : { ...info, ageMs: Math.max(0, now - st.mtimeMs) };
}

/**
 * The store's clock: the mtime of a probe file written (and removed) beside `file`. Undefined
 * when it cannot be written (a read-only mount: nobody holds leases there to be judged).
 */
function* storeNow(io: Io, file: string): Op<number | undefined> {
  const probe = tmpName(`${file}.clock`);
  try {
    yield io.writeText(probe, '');
    const st = (yield io.lstat(probe)) as { mtimeMs: number } | null;
    return st?.mtimeMs;
  } catch {
    return undefined;
  } finally {
    yield* unlinkQuietly(io, probe);
  }
}

/** The token in the lease file now, or null (no lease, or unreadable). */
export function* leaseToken(io: Io, dir: string): Op<string | null> {
  const file = leaseFile(dir);
  let raw: string | null;
  try {
    raw = (yield io.readText(file)) as string | null;
  } catch (err) {
    throw storeError('read the lease', file, err);
  }
  return raw === null ? null : (parseHolder(raw)?.token ?? null);
}

export function* refreshLease(io: Io, dir: string, holder: LeaseHolder): Op<boolean> {
  if ((yield* leaseToken(io, dir)) !== holder.token) return false;
  const file = leaseFile(dir);
  const tmp = yield* writeTemp(io, file, JSON.stringify(holder));
  try {
    yield io.rename(tmp, file);
  } catch (err) {
    yield* unlinkQuietly(io, tmp);
    throw storeError('refresh the lease', file, err);
  }
  return true;
}

export function* breakLease(io: Io, dir: string, observed: LeaseInfo): Op<boolean> {
  const marin = marinLockFile(dir);
  const file = observed.location === marin ? marin : leaseFile(dir);
  const aside = tmpName(`${file}.stale`);
  try {
    yield io.rename(file, aside);
  } catch (err) {
    if (isMissing(err)) return false;
    throw storeError('take over the lease', file, err);
  }
  try {
    const raw = (yield io.readText(aside)) as string | null;
    if (raw !== observed.raw) {
      // Not the lease we judged stale: put it back (link never replaces one made meanwhile).
      yield io.link(aside, file);
      return false;
    }
    return true;
  } finally {
    yield* unlinkQuietly(io, aside);
  }
}

export function* releaseLease(io: Io, dir: string, holder: LeaseHolder): Op<void> {
  if ((yield* leaseToken(io, dir)) !== holder.token) return;
  yield* unlinkLease(io, dir);
}

/** Removes the lease file (the caller has just checked that it is ours). */
export function* unlinkLease(io: Io, dir: string): Op<void> {
  const file = leaseFile(dir);
  try {
    yield io.unlink(file);
  } catch (err) {
    throw storeError('remove the lease', file, err);
  }
}

/** `CAIRN_LEASE_LOST` for a commit whose lease is no longer ours. */
export function leaseLost(dir: string, token: string | null): CairnError {
  const now = token === null ? 'there is no lease (removed from outside, or taken over and released)' : `another runner holds it now (token ${token})`;
  return new CairnError('CAIRN_LEASE_LOST', `The lease of ${dir} is no longer this runner's: ${now}. Nothing was committed; the other runner's work stands.`, { retryable: false });
}
