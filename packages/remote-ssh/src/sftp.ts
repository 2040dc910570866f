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
  writeFile(path: string, data: Buffer): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  mkdir(path: string): Promise<void>;
  readdir(path: string): Promise<RemoteEntry[]>;
  fastPut(local: string, remote: string): Promise<void>;
  fastGet(remote: string, local: string): Promise<void>;
}

/** Wraps an ssh2 SFTP session. `rename` overwrites (OpenSSH's posix-rename extension). */
export function promisify(s: SFTPWrapper): Sftp {
  const call = <T>(fn: (cb: (err: Error | null | undefined, v?: T) => void) => void) =>
    new Promise<T>((resolve, reject) => fn((err, v) => (err ? reject(err) : resolve(v as T))));
  return {
    stat: (p) => call<Stats>((cb) => s.stat(p, cb)),
    readFile: (p) => call<Buffer>((cb) => s.readFile(p, cb)),
    writeFile: (p, d) => call<void>((cb) => s.writeFile(p, d, cb)),
    rename: (a, b) => call<void>((cb) => s.ext_openssh_rename(a, b, cb)),
    mkdir: (p) => call<void>((cb) => s.mkdir(p, cb)),
    readdir: async (p) => {
      const list = await call<{ filename: string; attrs: { mode: number; size: number } }[]>((cb) => s.readdir(p, cb as never));
      return list.map((e) => ({
        name: e.filename,
        isDir: (e.attrs.mode & S_IFMT) === 0o040000,
        isFile: (e.attrs.mode & S_IFMT) === 0o100000,
        size: e.attrs.size,
      }));
    },
    fastPut: (l, r) => call<void>((cb) => s.fastPut(l, r, cb)),
    fastGet: (r, l) => call<void>((cb) => s.fastGet(r, l, cb)),
  };
}
