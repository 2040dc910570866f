import type { SFTPWrapper, Stats } from 'ssh2';

/** One directory entry. */
export interface RemoteEntry {
  readonly name: string;
  readonly isDir: boolean;
  readonly isFile: boolean;
  readonly size: number;
}

const S_IFMT = 0o170000;

/** Promise versions of the SFTP calls Cairn uses. */
export interface Sftp {
  stat(path: string): Promise<Stats>;
  readFile(path: string): Promise<Buffer>;
  /** Writes a file; `mode` applies when it is created (0600 unless said otherwise). */
  writeFile(path: string, data: Buffer, mode?: number): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  mkdir(path: string): Promise<void>;
  readdir(path: string): Promise<RemoteEntry[]>;
  /** Uploads a file, created with `mode` (0600 unless said otherwise). */
  fastPut(local: string, remote: string, mode?: number): Promise<void>;
  fastGet(remote: string, local: string): Promise<void>;
}

/** Wraps an ssh2 SFTP session. `rename` overwrites (OpenSSH's posix-rename extension); files are created 0600, directories 0700. */
export function promisify(s: SFTPWrapper): Sftp {
  const call = <T>(fn: (cb: (err: Error | null | undefined, v?: T) => void) => void) =>
    new Promise<T>((resolve, reject) => fn((err, v) => (err ? reject(err) : resolve(v as T))));
  return {
    stat: (p) => call<Stats>((cb) => s.stat(p, cb)),
    readFile: (p) => call<Buffer>((cb) => s.readFile(p, cb)),
    // SFTP creates files with the mode asked for (less the server's umask), not the login shell's umask.
    writeFile: (p, d, mode = 0o600) => call<void>((cb) => s.writeFile(p, d, { mode }, cb)),
    rename: (a, b) => call<void>((cb) => s.ext_openssh_rename(a, b, cb)),
    mkdir: (p) => call<void>((cb) => s.mkdir(p, { mode: 0o700 }, cb)),
    readdir: async (p) => {
      const list = await call<{ filename: string; attrs: { mode: number; size: number } }[]>((cb) => s.readdir(p, cb as never));
      return list.map((e) => ({
        name: e.filename,
        isDir: (e.attrs.mode & S_IFMT) === 0o040000,
        isFile: (e.attrs.mode & S_IFMT) === 0o100000,
        size: e.attrs.size,
      }));
    },
    fastPut: (l, r, mode = 0o600) => call<void>((cb) => s.fastPut(l, r, { mode }, cb)),
    fastGet: (r, l) => call<void>((cb) => s.fastGet(r, l, cb)),
  };
}
