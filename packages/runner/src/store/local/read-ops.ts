/** Reading steps' states from the local store: the status file, and the record when asked. */
import { availableParallelism } from 'node:os';
import { type RecordHead, recordHead, recordHeadIn } from '../record-head.js';
import { parseRecord, RECORD_FILE } from '../records.js';
import { parseStatus, STATUS_FILE, type StatusToken } from '../status.js';
import type { RecordWant, StoredState } from '../store.js';
import { batchReadsNative, type FilePairs, type FileTexts, type ReadResult, readInDirs, readThenInDirs } from './batch-read.js';
import { type Io, type Stat, syncIo } from './io.js';
import { localPath, recordFile, statusFile } from './layout.js';

type Op<T> = Generator<unknown, T, unknown>;

/**
 * The state of a status (and record) read from disk; `undefined` record text: not asked for.
 * `'head'` reads only the record's identity fields (record-head.ts: no parse of the whole record).
 */
function stateFrom(statusText: string | null, recordText: string | null | undefined, want: RecordWant): StoredState {
  let status: StatusToken | null = null;
  let problem: string | undefined;
  if (statusText !== null) {
    const p = parseStatus(statusText);
    status = p.status;
    problem = p.problem;
  }
  if (recordText === undefined) return problem ? { status, problem } : { status };
  if (recordText === null) return problem ? { status, record: null, problem } : { status, record: null };
  if (want === 'head') return withHead(status, problem, recordHead(recordText));
  const r = parseRecord(recordText);
  const pr = problem ?? r.problem;
  return pr ? { status, record: r.record, problem: pr } : { status, record: r.record };
}

function withHead(status: StatusToken | null, problem: string | undefined, h: { head: RecordHead | null; problem?: string }): StoredState {
  const pr = problem ?? h.problem;
  return pr ? { status, head: h.head, problem: pr } : { status, head: h.head };
}

/** {@link stateFrom} with the record's identity fields read from `bytes[from, to)` (its text is never made). */
function headStateIn(statusText: string, bytes: Buffer, from: number, to: number): StoredState {
  try {
    const p = parseStatus(statusText);
    return withHead(p.status, p.problem, recordHeadIn(bytes, from, to));
  } catch (err) {
    return unreadable(err);
  }
}

const SUCCESS: StatusToken = 'SUCCESS';

/**
 * File `k`'s text; the one constant string when its bytes are exactly `SUCCESS`, as a built step's
 * are (no string made per step: bench row warm-100k).
 */
function statusTextAt(texts: FileTexts, k: number): ReadResult {
  const from = texts.from(k);
  if (from >= 0 && texts.to(k) - from === SUCCESS.length) {
    const b = texts.bytes as Buffer;
    let same = true;
    for (let j = 0; j < SUCCESS.length && same; j++) same = b[from + j] === SUCCESS.charCodeAt(j);
    if (same) return SUCCESS;
  }
  return texts.at(k);
}

/** Whether a step's record is read: when asked for, and only where a status exists (no status, nothing built). */
function needsRecord(statusText: string | null, want: RecordWant): statusText is string {
  return want !== false && statusText !== null;
}

/** The record text a state is built with when its record is not read: not asked for, or absent. */
function unreadRecord(want: RecordWant): null | undefined {
  return want === false ? undefined : null;
}

/**
 * The state of a step directory that is a symbolic link: never served, whatever it points to
 * (safe-dirs.ts: the store neither writes nor reads through a link where it expects a step).
 */
function linked(dir: string): StoredState {
  return { status: null, problem: `${dir} is a symbolic link; the store does not read outputs through links (remove it, or pin the step to where it points)` };
}

function unreadable(err: unknown): StoredState {
  return { status: null, problem: `unreadable (${(err as Error).message})` };
}

/** {@link stateFrom}, never throwing (as {@link readOne}). */
function safeState(statusText: string | null, recordText: string | null | undefined, want: RecordWant): StoredState {
  try {
    return stateFrom(statusText, recordText, want);
  } catch (err) {
    return unreadable(err);
  }
}

/**
 * Whether the last status {@link readOne} read was absent. A hint, not a rule: after a miss the
 * next status is probed (`io.probeText`: a miss without a thrown error, a hit one stat more),
 * after a hit it is read directly. A cold run misses nearly every time and a warm one hits
 * (bench rows cold-100k, and warm reruns without the native module); both reads give the same answer.
 */
let lastAbsent = false;

/** One step's state; never throws (an unreadable file is a `problem`). */
export function* readOne(io: Io, path: string, withRecord: RecordWant): Op<StoredState> {
  try {
    const dir = localPath(path);
    const file = statusFile(dir);
    const statusText = (yield lastAbsent ? io.probeText(file) : io.readText(file)) as string | null;
    lastAbsent = statusText === null;
    // A hit is served only from a real directory (one lstat more per built step).
    if (statusText !== null && ((yield io.lstat(dir)) as Stat | null)?.symlink === true) return linked(dir);
    const recordText = needsRecord(statusText, withRecord) ? ((yield io.readText(recordFile(dir))) as string | null) : unreadRecord(withRecord);
    return stateFrom(statusText, recordText, withRecord);
  } catch (err) {
    return unreadable(err);
  }
}

/** Whether `dir` is a symbolic link (read on this thread: only for steps whose status was found). */
function isLink(dir: string): boolean {
  try {
    return (syncIo.lstat(dir) as Stat | null)?.symlink === true;
  } catch {
    return false;
  }
}

/** Steps per batch of {@link readStatesParallel}: at least this many (a hand-off to a thread is cheap beside them)... */
const CHUNK_MIN = 256;
/** ...and at most this many, so that the main thread decodes one while the threads read the next. */
const CHUNK_MAX = 4096;

/**
 * Many steps' states, as {@link readOne} reads each, with the files read on libuv's threads
 * (batch-read.ts): for one chunk of steps after another, the status files and the records of the
 * SUCCESS ones, then the other records where a status exists. One chunk per core is in flight
 * while the main thread decodes the ones read. Undefined without the native module.
 */
export function readStatesParallel(paths: readonly string[], want: (i: number) => RecordWant): Promise<StoredState[]> | undefined {
  if (!batchReadsNative) return undefined;
  const out = new Array<StoredState>(paths.length);
  const cores = availableParallelism();
  // A discovery batch (1,024 steps) is split across the cores, one chunk each: every chunk costs
  // a native call on the main thread (two where records are read after their statuses), and
  // discovery already overlaps a batch's read with hashing the next (bench row warm-100k).
  const chunk = Math.min(CHUNK_MAX, Math.max(CHUNK_MIN, Math.ceil(paths.length / cores)));
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < paths.length) {
      const from = next;
      next = Math.min(paths.length, next + chunk);
      await readChunk(paths, from, next, want, out);
    }
  };
  const lanes = Math.min(cores, Math.ceil(paths.length / chunk));
  return Promise.all(Array.from({ length: lanes }, lane)).then(() => out);
}

/** The states of steps `[from, to)` into `out`. */
async function readChunk(paths: readonly string[], from: number, to: number, want: (i: number) => RecordWant, out: StoredState[]): Promise<void> {
  const at: number[] = [];
  const dirs: string[] = [];
  for (let i = from; i < to; i++) {
    try {
      dirs.push(localPath(paths[i] as string));
      at.push(i);
    } catch (err) {
      out[i] = unreadable(err);
    }
  }
  if (dirs.length === 0) return;
  // Where every step wants its record, a built step's status and record come in one call; else
  // the records are read after the statuses, only where asked for.
  let everyWants = true;
  for (let k = 0; k < at.length && everyWants; k++) everyWants = want(at[k] as number) !== false;
  // noLinks: the native side refuses step directories that are links as it opens their status (no lstat each).
  const pairs = everyWants ? await (readThenInDirs(dirs, STATUS_FILE, SUCCESS, RECORD_FILE) as Promise<FilePairs>) : undefined;
  const texts = pairs?.first ?? (await (readInDirs(dirs, STATUS_FILE, true) as Promise<FileTexts>));
  const recordAt: number[] = [];
  const recordStatus: string[] = [];
  const recordDirs: string[] = [];
  for (let k = 0; k < at.length; k++) {
    const i = at[k] as number;
    const text = statusTextAt(texts, k);
    const w = want(i);
    if (text instanceof Error) out[i] = unreadable(text);
    else if (text !== null && !texts.linkFree(k) && isLink(dirs[k] as string)) out[i] = linked(dirs[k] as string);
    else if (!needsRecord(text, w)) out[i] = safeState(text, unreadRecord(w), w);
    else if (pairs?.asked(k) === true) out[i] = stateWithRecord(text, pairs.then, k, w);
    else {
      recordAt.push(i);
      recordStatus.push(text);
      recordDirs.push(dirs[k] as string);
    }
  }
  if (recordDirs.length === 0) return;
  const records = await (readInDirs(recordDirs, RECORD_FILE) as Promise<FileTexts>);
  for (let k = 0; k < recordAt.length; k++) {
    const i = recordAt[k] as number;
    out[i] = stateWithRecord(recordStatus[k] as string, records, k, want(i));
  }
}

/** The state of a step whose status is `status` and whose record is `records`' file `k`. */
function stateWithRecord(status: string, records: FileTexts, k: number, w: RecordWant): StoredState {
  const from = records.from(k);
  if (from >= 0 && w === 'head') return headStateIn(status, records.bytes as Buffer, from, records.to(k));
  const r = records.at(k);
  return r instanceof Error ? unreadable(r) : safeState(status, r, w);
}
