/**
 * The file operations of the local store, twice: synchronously (a local disk: each call is a
 * few microseconds, cheaper than a thread-pool round trip) and asynchronously (a network
 * filesystem, where a slow call must not stall the event loop). The store's operations are
 * written once, as generators that yield these calls (see `drive`).
 */
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import type { Maybe } from '../../maybe.js';

/** What an lstat tells the store. */
export interface Stat {
  readonly mtimeMs: number;
  readonly dir: boolean;
  readonly symlink: boolean;
}

/** The calls. Missing files are answers (null, false, []), not errors; other failures throw the fs error. */
export interface Io {
  /** The file's text; null when it does not exist. */
  readText(file: string): Maybe<string | null>;
  /** {@link readText} for a file that is probably absent (Marin's lock; a status after a miss: read-ops.ts). */
  probeText(file: string): Maybe<string | null>;
  /** Creates or truncates `file` with `text`. */
  writeText(file: string, text: string): Maybe<void>;
  /** rename(2). */
  rename(from: string, to: string): Maybe<void>;
  /** Renames a directory onto `to`; false (nothing moved) when `to` exists and is not an empty directory. */
  renameDir(from: string, to: string): Maybe<boolean>;
  /** link(2); false when `name` exists. */
  link(existing: string, name: string): Maybe<boolean>;
  /** unlink(2); false when the file does not exist. */
  unlink(file: string): Maybe<boolean>;
  /** mkdir; `recursive` like `mkdir -p`. True when this call created `dir`. */
  mkdir(dir: string, recursive: boolean): Maybe<boolean>;
  /** `rm -rf`. */
  rmrf(path: string): Maybe<void>;
  /** rmdir(2): false when the directory is not empty (or absent: true). */
  rmdir(dir: string): Maybe<boolean>;
  /** lstat(2); null when absent. */
  lstat(path: string): Maybe<Stat | null>;
  /** Entry names; [] when the directory does not exist. */
  readdir(dir: string): Maybe<string[]>;
  /** Where a symbolic link points. */
  readlink(path: string): Maybe<string>;
  /** Throws unless the directory can be written (access W_OK: a read-only mount says EROFS). */
  accessWrite(dir: string): Maybe<void>;
  /**
   * Copies the directory tree `from` to `to` (created), leaving out entries whose name starts with
   * a dot; a reflink where the filesystem offers one, links as links.
   */
  copyTree(from: string, to: string): Maybe<void>;
}

/** Options of the tree copy: reflink when possible, hidden entries (unfinished writes) left out. */
function copyOptions(from: string): fs.CopySyncOptions {
  return {
    recursive: true,
    mode: fs.constants.COPYFILE_FICLONE,
    verbatimSymlinks: true,
    filter: (src: string) => src === from || !src.slice(src.lastIndexOf('/') + 1).startsWith('.'),
  };
}

export function isMissing(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

function isOccupied(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOTEMPTY' || code === 'EEXIST' || code === 'ENOTDIR' || code === 'EISDIR';
}

const statOf = (s: fs.Stats): Stat => ({ mtimeMs: s.mtimeMs, dir: s.isDirectory(), symlink: s.isSymbolicLink() });

/** One shared read buffer: small files are read with open + one read + close, no fstat, no allocation. */
const SCRATCH = Buffer.allocUnsafe(64 * 1024);

export const syncIo: Io = {
  readText(file) {
    let fd: number;
    try {
      fd = fs.openSync(file, 'r');
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
    try {
      const n = fs.readSync(fd, SCRATCH, 0, SCRATCH.length, 0);
      return n < SCRATCH.length ? SCRATCH.toString('utf8', 0, n) : fs.readFileSync(fd, 'utf8');
    } finally {
      fs.closeSync(fd);
    }
  },
  probeText(file) {
    // A miss costs a stat that answers undefined, 3 µs here, instead of a thrown ENOENT, 8-9 µs
    // (a cold step probes two absent files: bench row cold-100k); a hit costs the stat more. Any
    // other failure is left to the read, which throws it as readText does.
    try {
      if (fs.statSync(file, { throwIfNoEntry: false }) === undefined) return null;
    } catch (err) {
      if (isMissing(err)) return null;
    }
    return syncIo.readText(file);
  },
  writeText: (file, text) => fs.writeFileSync(file, text),
  rename: (from, to) => fs.renameSync(from, to),
  renameDir(from, to) {
    try {
      fs.renameSync(from, to);
      return true;
    } catch (err) {
      if (isOccupied(err)) return false;
      throw err;
    }
  },
  link(existing, name) {
    try {
      fs.linkSync(existing, name);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw err;
    }
  },
  unlink(file) {
    try {
      fs.unlinkSync(file);
      return true;
    } catch (err) {
      if (isMissing(err)) return false;
      throw err;
    }
  },
  mkdir(dir, recursive) {
    if (recursive) return fs.mkdirSync(dir, { recursive: true }) !== undefined;
    try {
      fs.mkdirSync(dir);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw err;
    }
  },
  rmrf: (path) => fs.rmSync(path, { recursive: true, force: true }),
  rmdir(dir) {
    try {
      fs.rmdirSync(dir);
      return true;
    } catch (err) {
      if (isMissing(err)) return true;
      if ((err as NodeJS.ErrnoException).code === 'ENOTEMPTY' || (err as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw err;
    }
  },
  lstat(path) {
    const s = fs.lstatSync(path, { throwIfNoEntry: false });
    return s === undefined ? null : statOf(s);
  },
  readdir(dir) {
    // A missing directory answers without an exception, which costs more than the stat (bench
    // row "plan (dry run), nothing built": each step's earlier builds are looked for).
    if (fs.statSync(dir, { throwIfNoEntry: false }) === undefined) return [];
    try {
      return fs.readdirSync(dir);
    } catch (err) {
      if (isMissing(err)) return [];
      throw err;
    }
  },
  readlink: (path) => fs.readlinkSync(path),
  accessWrite: (dir) => fs.accessSync(dir, fs.constants.W_OK),
  copyTree: (from, to) => fs.cpSync(from, to, copyOptions(from)),
};

export const asyncIo: Io = {
  async readText(file) {
    try {
      return await fsp.readFile(file, 'utf8');
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  },
  probeText(file) {
    return asyncIo.readText(file);
  },
  writeText: (file, text) => fsp.writeFile(file, text),
  rename: (from, to) => fsp.rename(from, to),
  async renameDir(from, to) {
    try {
      await fsp.rename(from, to);
      return true;
    } catch (err) {
      if (isOccupied(err)) return false;
      throw err;
    }
  },
  async link(existing, name) {
    try {
      await fsp.link(existing, name);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw err;
    }
  },
  async unlink(file) {
    try {
      await fsp.unlink(file);
      return true;
    } catch (err) {
      if (isMissing(err)) return false;
      throw err;
    }
  },
  async mkdir(dir, recursive) {
    if (recursive) return (await fsp.mkdir(dir, { recursive: true })) !== undefined;
    try {
      await fsp.mkdir(dir);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw err;
    }
  },
  rmrf: (path) => fsp.rm(path, { recursive: true, force: true }),
  async rmdir(dir) {
    try {
      await fsp.rmdir(dir);
      return true;
    } catch (err) {
      if (isMissing(err)) return true;
      if ((err as NodeJS.ErrnoException).code === 'ENOTEMPTY' || (err as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw err;
    }
  },
  async lstat(path) {
    try {
      return statOf(await fsp.lstat(path));
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  },
  async readdir(dir) {
    try {
      return await fsp.readdir(dir);
    } catch (err) {
      if (isMissing(err)) return [];
      throw err;
    }
  },
  readlink: (path) => fsp.readlink(path),
  accessWrite: (dir) => fsp.access(dir, fsp.constants.W_OK),
  copyTree: (from, to) => fsp.cp(from, to, copyOptions(from)),
};
