/**
 * Reading a large batch of small files at once: the status files and records a warm run checks
 * for every step it serves.
 *
 * Each read costs a few microseconds of `open`/`read`/`close` in the kernel (on a VM, more than
 * the JS around it), and the main thread can do one at a time. With `@cairn/native` loaded, a
 * batch is read on a thread of libuv's pool (`readFiles`) while the main thread goes on;
 * read-ops.ts keeps one batch in flight per core and decodes each as it lands (bench row "warm
 * rerun", tools/bench/README.md). Without it, the store reads one file after another on the main
 * thread (io.ts), with the same answers: same texts, same missing files, same error codes and
 * messages (test/local-batch-read.test.ts compares the two).
 */
import { constants } from 'node:os';
import { getSystemErrorMap } from 'node:util';
import native from '@cairn/native';
import { syncIo } from './io.js';

/** A file's text, `null` when it does not exist (ENOENT, ENOTDIR), or the error that reading it raised. */
export type ReadResult = string | null | Error;

/** Batches smaller than this are read on the main thread: a promise per batch is not worth it. */
export const BATCH_MIN = 512;

const PHASE_OPEN = 1 << 16;
const PHASE_READ = 2 << 16;
/** Not read by the native side (the batch's buffer would pass 4 GiB): read here instead. */
const NOT_READ = 0xffffffff;
const ENOENT = 2;
const ENOTDIR = 20;
/** What the native side answers for a file it did not read because a link was on its way (`noLinks`). */
const LINKED = PHASE_OPEN | constants.errno.ELOOP;

/** The `readFiles` of the loaded native module, or undefined (no module, or CAIRN_NATIVE=0). */
const readFiles = native.binding?.readFiles;

/** True when batches are read on libuv's threads. */
export const batchReadsNative = readFiles !== undefined;

let errnoNames: Map<number, [string, string]> | undefined;

/** The error Node's fs would have thrown for `errno` in `syscall` (same code, same message). */
function fsError(errno: number, syscall: 'open' | 'read', file: string): Error {
  errnoNames ??= getSystemErrorMap();
  const [code, desc] = errnoNames.get(-errno) ?? [`E${errno}`, `error ${errno}`];
  const err = new Error(syscall === 'open' ? `${code}: ${desc}, open '${file}'` : `${code}: ${desc}, read`) as NodeJS.ErrnoException;
  err.errno = -errno;
  err.code = code;
  err.syscall = syscall;
  if (syscall === 'open') err.path = file;
  return err;
}

/** Reads each file on the main thread (the fallback, and files the native side left). */
function readHere(file: string): ReadResult {
  try {
    return syncIo.readText(file) as string | null; // syncIo answers synchronously
  } catch (err) {
    return err as Error;
  }
}

/**
 * Files read in one batch. A text is made when asked for, so that a warm run's 10^5 records are
 * not all alive at once (each dies young, as when read one by one: kept, they would be copied
 * out of the young generation, the run's largest cost after the reads themselves).
 */
export interface FileTexts {
  readonly length: number;
  /** File `i`'s text (made on every call), `null` when it does not exist, or its read error. */
  at(i: number): ReadResult;
  /** True when file `i` was read and its directory is known not to be a symbolic link (read with `noLinks`). */
  linkFree(i: number): boolean;
  /**
   * The bytes the native side read, where a reader that needs only part of a file looks
   * without making its text (bench row warm-100k): file `i` is `bytes[from(i), to(i))` when
   * `from(i)` is not -1; -1 when it is not there (missing, an error, read here: ask {@link at}).
   */
  readonly bytes: Buffer | undefined;
  from(i: number): number;
  to(i: number): number;
}

const NOT_IN_BYTES = (): number => -1;

/** `files` read one after another on the main thread. */
export function readSequential(files: readonly string[]): FileTexts {
  const out = new Array<ReadResult>(files.length);
  for (let i = 0; i < files.length; i++) out[i] = readHere(files[i] as string);
  return { length: out.length, at: (i) => out[i] as ReadResult, linkFree: () => false, bytes: undefined, from: NOT_IN_BYTES, to: NOT_IN_BYTES };
}

interface Chunk {
  readonly dirs: readonly string[];
  readonly buf: Buffer;
  readonly ends: Uint32Array;
  readonly errors: Uint32Array;
}

/** One file of each directory in a chunk: entry `first + i * stride` is the one of `dirs[i]`. */
interface View {
  readonly c: Chunk;
  /** `/` + the file's name. */
  readonly suffix: string;
  readonly first: number;
  readonly stride: number;
  /** The native side refused links for these files (`noLinks`). */
  readonly linksChecked: boolean;
}

function textOf(v: View, i: number): ReadResult {
  const { c } = v;
  const j = v.first + i * v.stride;
  const e = c.errors[j] as number;
  if (e === 0) return c.buf.toString('utf8', j === 0 ? 0 : (c.ends[j - 1] as number), c.ends[j] as number);
  const file = (c.dirs[i] as string) + v.suffix;
  // A file behind a link (noLinks) is read here, as it would have been: the caller then checks its directory.
  if (e === NOT_READ || (e === LINKED && v.linksChecked)) return readHere(file);
  const errno = e & 0xffff;
  const open = (e & ~0xffff) === PHASE_OPEN;
  // Missing as io.ts's isMissing says (by number: a cold run finds 10^5 missing files, no Error each).
  return open && (errno === ENOENT || errno === ENOTDIR) ? null : fsError(errno, open ? 'open' : 'read', file);
}

function textsOf(v: View): FileTexts {
  const { c, first, stride, linksChecked } = v;
  return {
    length: c.dirs.length,
    at: (i) => textOf(v, i),
    linkFree: (i) => linksChecked && c.errors[first + i * stride] === 0,
    bytes: c.buf,
    from: (i) => {
      const j = first + i * stride;
      return c.errors[j] !== 0 ? -1 : j === 0 ? 0 : (c.ends[j - 1] as number);
    },
    to: (i) => c.ends[first + i * stride] as number,
  };
}

/**
 * `dirs` as `readFiles` takes them: a directory above them all and the rest of each path,
 * NUL-separated; undefined when a name holds a NUL byte (such a batch is read here, and fails as fs fails).
 */
function namesBelow(dirs: readonly string[], ...files: readonly string[]): { base: string; names: string } | undefined {
  const base = commonDir(dirs);
  const names = (base === '' ? dirs : dirs.map((d) => d.slice(base.length + 1))).join('\0');
  let nuls = 0;
  for (let at = names.indexOf('\0'); at >= 0 && nuls < dirs.length; at = names.indexOf('\0', at + 1)) nuls++;
  return nuls !== dirs.length - 1 || files.some((f) => f.includes('\0')) ? undefined : { base, names };
}

function chunkOf(dirs: readonly string[], r: { bytes: Uint8Array; ends: Uint32Array; errors: Uint32Array }): Chunk {
  return { dirs, buf: Buffer.from(r.bytes.buffer, r.bytes.byteOffset, r.bytes.byteLength), ends: r.ends, errors: r.errors };
}

/**
 * The file `name` in each of `dirs`, read on a thread of libuv's pool (several calls at once:
 * several threads); undefined when the native module is not loaded. The native side opens them
 * relative to a directory above them all (`openat`: the kernel walks only the rest of each
 * path). Names holding a NUL byte cannot be passed: such a batch is read here (and fails as fs fails).
 * `noLinks`: the native side also tells which files it read from a directory that is not a
 * symbolic link (`linkFree`), so the caller need not `lstat` them (bench row warm-100k).
 */
export function readInDirs(dirs: readonly string[], name: string, noLinks = false): Promise<FileTexts> | undefined {
  if (readFiles === undefined) return undefined;
  const suffix = `/${name}`;
  const packed = namesBelow(dirs, name);
  if (packed === undefined) return Promise.resolve(readSequential(dirs.map((d) => d + suffix)));
  return readFiles(packed.base, packed.names, suffix, noLinks).then((r) => textsOf({ c: chunkOf(dirs, r), suffix, first: 0, stride: 1, linksChecked: r.linksChecked === true }));
}

/** What the native side answers for a `then` file it did not read (the first file was not the token). */
const NOT_ASKED = 0xfffffffe;

/** {@link readThenInDirs}: each directory's first file, and its second where it was read. */
export interface FilePairs {
  readonly first: FileTexts;
  /** Meaningful where {@link asked}. */
  readonly then: FileTexts;
  /** Whether directory `i`'s second file was read (its first was read, and is exactly the token). */
  asked(i: number): boolean;
}

/**
 * {@link readInDirs} of `name` with `noLinks`, and in the same batch `thenName` in each
 * directory whose `name` holds exactly `token`: a built step's status and record in one call
 * to the native side instead of two (bench row warm-100k). `thenName` is read as
 * {@link readInDirs} without `noLinks` reads it. Undefined without the native module.
 */
export function readThenInDirs(dirs: readonly string[], name: string, token: string, thenName: string): Promise<FilePairs> | undefined {
  if (readFiles === undefined) return undefined;
  const suffix = `/${name}`;
  const thenSuffix = `/${thenName}`;
  const packed = namesBelow(dirs, name, thenName);
  if (packed === undefined) {
    const first = readSequential(dirs.map((d) => d + suffix));
    return Promise.resolve({ first, then: first, asked: () => false });
  }
  return readFiles(packed.base, packed.names, suffix, true, token, thenSuffix).then((r) => {
    const c = chunkOf(dirs, r);
    return {
      first: textsOf({ c, suffix, first: 0, stride: 2, linksChecked: r.linksChecked === true }),
      then: textsOf({ c, suffix: thenSuffix, first: 1, stride: 2, linksChecked: false }),
      asked: (i) => c.errors[2 * i + 1] !== NOT_ASKED,
    };
  });
}

/** A directory strictly above every one of `dirs` (`''`: none but the root). */
function commonDir(dirs: readonly string[]): string {
  const first = dirs[0] as string;
  let base = first.slice(0, Math.max(0, first.lastIndexOf('/')));
  for (let i = 1; i < dirs.length && base !== ''; i++) {
    const d = dirs[i] as string;
    while (base !== '' && !(d.length > base.length + 1 && d.charCodeAt(base.length) === 47 && d.startsWith(base))) base = base.slice(0, Math.max(0, base.lastIndexOf('/')));
  }
  return base;
}
