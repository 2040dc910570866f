/**
 * Staged outputs and fenced commits of the local store.
 *
 * An attempt writes into its own directory beside the output path (layout.ts), on the same
 * filesystem. The commit writes the record and then the status into that directory (it is the
 * attempt's alone: no temporary files), checks that the lease is still ours, and renames the
 * directory into place: the output, its record and its status appear at the path together, and
 * a zombie attempt (a runner paused past its lease) keeps writing into a directory that is
 * never published. An output already at the path (a `dev` rebuild, a rerun of a failure) is
 * renamed aside first and removed after. A commit without a staged attempt (DEP_FAILED) writes
 * the status (and record) in place, each atomically.
 */
import { CairnError, isCairnError } from '@cairn/core';
import type { LeaseHolder } from '../leases.js';
import type { AttemptLogs, CommitRequest, StagedAttempt } from '../store.js';
import { storeError } from './errors.js';
import { isMissing, type Io, type Stat } from './io.js';
import { attemptFilesIn, attemptOfLogName } from '../attempt-files.js';
import { attemptDir, attemptPrefix, logsDir, oldDir, parentOf, recordFile, SIBLING_MARK, stagedAt, statusFile, tmpName } from './layout.js';
import { leaseLost, leaseToken, unlinkLease } from './lease-ops.js';
import { unsafe } from './safe-dirs.js';
import { removeCheckpoints } from './checkpoint-ops.js';

type Op<T> = Generator<unknown, T, unknown>;

/** The record's text as written (indented: people read records). */
function recordText(request: CommitRequest): string | undefined {
  return request.record === undefined ? undefined : `${JSON.stringify(request.record.build(), null, 2)}\n`;
}

export function* stage(io: Io, path: string, holder: LeaseHolder, attempt: number, previous: StagedAttempt | undefined): Op<StagedAttempt> {
  const dir = attemptDir(path, holder.runId, attempt);
  // A retry in this run keeps its run's generation; otherwise the step opens one when it first
  // asks (openCheckpoints, checkpoint-ops.ts): a step that never does pays nothing for it.
  const checkpoints = previous?.checkpoints;
  try {
    if (!((yield io.mkdir(dir, false)) as boolean)) {
      // Left by an earlier lease of this same run on the step: start clean.
      yield io.rmrf(dir);
      yield io.mkdir(dir, false);
    }
  } catch (err) {
    throw storeError('create the attempt directory', dir, err);
  }
  const staged: StagedAttempt = checkpoints === undefined ? stagedAt(path, dir, attempt) : { ...stagedAt(path, dir, attempt), checkpoints };
  if (previous !== undefined && previous.dir !== path) {
    // The earlier attempt's logs stay with the step; its output does not.
    const from = logsDir(previous.dir);
    const names = (yield io.readdir(from)) as string[];
    if (names.length > 0) {
      const to = logsDir(dir);
      yield io.mkdir(to, true);
      for (const n of names) yield io.rename(`${from}/${n}`, `${to}/${n}`);
    }
    yield io.rmrf(previous.dir);
  }
  return staged;
}

/** Throws CAIRN_LEASE_LOST (after `onLost`) unless the lease file holds `holder`'s token. */
function* fence(io: Io, path: string, holder: LeaseHolder, onLost: (() => unknown) | undefined): Op<void> {
  const token = yield* leaseToken(io, path);
  if (token === holder.token) return;
  if (onLost !== undefined) yield onLost();
  throw leaseLost(path, token);
}

/**
 * Writes `text` to `file` inside a staged directory, recreating the directory once if the step
 * removed it: only the directory itself, never the ones above it (which must still be the
 * store's: a parent swapped meanwhile is refused before this, see LocalStore.commit).
 */
function* writeStaged(io: Io, dir: string, file: string, text: string, what: string): Op<void> {
  try {
    try {
      yield io.writeText(file, text);
    } catch (err) {
      if (!isMissing(err)) throw err;
      yield io.mkdir(dir, false);
      yield io.writeText(file, text);
    }
  } catch (err) {
    throw storeError(`write ${what} to`, file, err);
  }
}

/** Writes `text` to `file` atomically (temporary file + rename). */
function* writeAtomic(io: Io, file: string, text: string, what: string): Op<void> {
  const tmp = tmpName(file);
  try {
    yield io.writeText(tmp, text);
    yield io.rename(tmp, file);
  } catch (err) {
    yield io.unlink(tmp);
    throw storeError(`write ${what} to`, file, err);
  }
}

/** Renames `from` into place at `path`, moving an existing output aside first (never a link or a file planted there). */
function* publish(io: Io, from: string, path: string, runId: string): Op<void> {
  try {
    if ((yield io.renameDir(from, path)) as boolean) return;
    const st = (yield io.lstat(path)) as Stat | null;
    if (st !== null && (st.symlink || !st.dir)) {
      yield io.rmrf(from);
      throw unsafe(path, path, st.symlink ? `a symbolic link (to ${(yield io.readlink(path)) as string})` : 'not a directory', undefined);
    }
    const aside = oldDir(path, runId);
    yield io.rmrf(aside);
    yield io.rename(path, aside);
    yield io.rename(from, path);
    yield io.rmrf(aside);
  } catch (err) {
    if (isCairnError(err)) throw err;
    throw storeError('move the finished attempt into place at', path, err);
  }
}

export function* commit(io: Io, path: string, holder: LeaseHolder, request: CommitRequest, release: boolean): Op<void> {
  const staged = request.staged;
  const text = recordText(request);
  if (staged !== undefined && staged.dir !== path) {
    try {
      if (text !== undefined) yield* writeStaged(io, staged.dir, recordFile(staged.dir), text, 'the record');
      yield* writeStaged(io, staged.dir, statusFile(staged.dir), request.status, 'the status');
    } catch (err) {
      // Unpublishable (a full disk, most often): the attempt's files must not keep holding the
      // space. A FAILED commit that follows writes its record and status into a fresh directory.
      yield io.rmrf(staged.dir);
      throw err;
    }
    yield* fence(io, path, holder, () => io.rmrf(staged.dir));
    yield* publish(io, staged.dir, path, holder.runId);
    // Under the lease still: no other runner has started a generation since.
    if (request.status === 'SUCCESS' && request.keepCheckpoints !== true) yield* removeCheckpoints(io, path, staged.checkpoints);
  } else {
    yield* fence(io, path, holder, undefined);
    try {
      yield io.mkdir(path, true);
    } catch (err) {
      throw storeError('create', path, err);
    }
    if (text !== undefined) yield* writeAtomic(io, recordFile(path), text, 'the record');
    yield* writeAtomic(io, statusFile(path), request.status, 'the status');
  }
  // The fence's check just now is the release's: the lease is ours.
  if (release) yield* unlinkLease(io, path);
}

export function* abandon(io: Io, staged: StagedAttempt): Op<void> {
  if (staged.dir !== staged.path) yield io.rmrf(staged.dir);
}

/** A temporary file of a lease or job record (layout.ts `tmpName`): `lease.tmp-…`, `lease.stale.tmp-…`, `lease.clock.tmp-…`, `job.json.tmp-…`. */
const TEMP_FILE = /^(lease|job\.json)(\.[a-z]+)?\.tmp-\d+-\d+$/;

/** A temporary file this old was left by a runner that died between writing and renaming it (each lives for microseconds). */
const TEMP_LEFT_MS = 10_000;

/** Removes dead attempts' directories, aside outputs and left temporary files beside `path`, except `keep`. */
export function* sweep(io: Io, path: string, keep: StagedAttempt | undefined): Op<void> {
  const parent = parentOf(path);
  const stem = `.${path.slice(parent.length + 1)}${SIBLING_MARK}`;
  const names = (yield io.readdir(parent)) as string[];
  for (const n of names) {
    if (!n.startsWith(stem)) continue;
    const rest = n.slice(stem.length);
    const full = `${parent}/${n}`;
    if ((rest.startsWith('attempt-') || rest.startsWith('old-')) && full !== keep?.dir) yield io.rmrf(full);
    else if (TEMP_FILE.test(rest)) {
      const st = (yield io.lstat(full)) as Stat | null;
      if (st !== null && !st.dir && Date.now() - st.mtimeMs > TEMP_LEFT_MS) yield io.unlink(full);
    }
  }
}

/** Attempt numbers and log files under a logs directory. */
function* logsIn(io: Io, dir: string, running: boolean): Op<AttemptLogs[]> {
  const names = (yield io.readdir(logsDir(dir))) as string[];
  const attempts = new Set<number>();
  for (const n of names) {
    const a = attemptOfLogName(n);
    if (a !== undefined) attempts.add(a);
  }
  return [...attempts].sort((a, b) => a - b).map((attempt) => {
    const f = attemptFilesIn(dir, attempt);
    return { attempt, stdout: f.stdout, stderr: f.stderr, running };
  });
}

export function* attemptLogs(io: Io, path: string): Op<readonly AttemptLogs[]> {
  const committed = yield* logsIn(io, path, false);
  const parent = parentOf(path);
  const prefix = attemptPrefix(path).slice(parent.length + 1);
  const staged: AttemptLogs[] = [];
  for (const n of ((yield io.readdir(parent)) as string[]).sort()) {
    if (n.startsWith(prefix)) staged.push(...(yield* logsIn(io, `${parent}/${n}`, true)));
  }
  return [...committed, ...staged];
}

/** `CAIRN_STORE` for a step directory that is not a directory the store can use. */
export function notAStepDir(path: string, what: string): CairnError {
  return new CairnError('CAIRN_STORE', `${path} is ${what}, not a step's output directory; the store does not follow it. Remove it, or pin the step elsewhere.`);
}
