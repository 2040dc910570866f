import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { CairnError } from '@cairn/core';
import type { HostConnection } from './connection.js';
import { shScript } from './quote.js';
import { MANIFEST_SCRIPT } from './remote-script.js';
import type { OutputListing } from './runtime/protocol.js';
import { promisify, type Sftp } from './sftp.js';

/** Size and SHA-256 of one file. */
interface Fingerprint {
  readonly size: number;
  readonly sha256: string;
}

/** What a staging call moved. */
export interface StagingReport {
  /** Files copied and verified. */
  readonly files: number;
  /** Bytes copied. */
  readonly bytes: number;
}

/** Relative paths of the files and directories under a local dir (symlinks followed). */
async function walkLocal(root: string): Promise<{ dirs: string[]; files: string[] }> {
  const dirs: string[] = [];
  const files: string[] = [];
  const visit = async (rel: string) => {
    for (const e of await readdir(join(root, rel), { withFileTypes: true })) {
      const r = rel === '' ? e.name : `${rel}/${e.name}`;
      const isDir = e.isDirectory() || (e.isSymbolicLink() && (await stat(join(root, r))).isDirectory());
      if (isDir) {
        dirs.push(r);
        await visit(r);
      } else files.push(r);
    }
  };
  await visit('');
  return { dirs, files };
}

async function walkRemote(sftp: Sftp, root: string): Promise<{ dirs: string[]; files: string[] }> {
  const dirs: string[] = [];
  const files: string[] = [];
  const visit = async (rel: string) => {
    for (const e of await sftp.readdir(rel === '' ? root : `${root}/${rel}`)) {
      if (e.name === '.' || e.name === '..') continue;
      const r = rel === '' ? e.name : `${rel}/${e.name}`;
      if (e.isDir) {
        dirs.push(r);
        await visit(r);
      } else if (e.isFile) files.push(r);
    }
  };
  await visit('');
  return { dirs, files };
}

async function localFingerprint(path: string): Promise<Fingerprint> {
  const h = createHash('sha256');
  let size = 0;
  for await (const chunk of createReadStream(path)) {
    h.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { size, sha256: h.digest('hex') };
}

/** Size and SHA-256 of remote files, in one exec. */
async function remoteFingerprints(conn: HostConnection, paths: readonly string[]): Promise<(Fingerprint | null)[]> {
  if (paths.length === 0) return [];
  const r = await conn.exec(shScript(MANIFEST_SCRIPT, paths), { timeoutMs: 600_000 });
  if (r.code !== 0) throw new CairnError('CAIRN_REMOTE', `SSH host "${conn.target.name}": cannot hash staged files: ${r.stderr.trim()}.`, { retryable: true });
  const lines = r.stdout.toString('utf8').split('\n');
  return paths.map((_, i) => {
    const [size, sha] = (lines[i] ?? '- -').split(' ');
    return size === '-' || !sha ? null : { size: Number(size), sha256: sha };
  });
}

async function inBatches<T>(items: readonly T[], width: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await fn(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, lane));
}

function mismatch(conn: HostConnection, what: string, file: string, a: Fingerprint | null, b: Fingerprint): CairnError {
  return new CairnError(
    'CAIRN_REMOTE',
    `SSH host "${conn.target.name}": ${what} of ${JSON.stringify(file)} did not verify (remote ${a ? `${a.size} B ${a.sha256.slice(0, 12)}` : 'missing'}, local ${b.size} B ${b.sha256.slice(0, 12)}). The transfer is retried with the step.`,
    { retryable: true },
  );
}

/** Copies a local directory tree to the host by SFTP and verifies every file's size and SHA-256 there. */
export async function uploadDir(conn: HostConnection, localDir: string, remoteDir: string): Promise<StagingReport> {
  const { dirs, files } = await walkLocal(localDir);
  const sftp = promisify(await conn.sftp());
  const mk = await conn.exec(shScript('for d in "$@"; do mkdir -p -- "$d" || exit 1; done', [remoteDir, ...dirs.map((d) => `${remoteDir}/${d}`)]));
  if (mk.code !== 0) throw new CairnError('CAIRN_REMOTE', `SSH host "${conn.target.name}": cannot create ${remoteDir}: ${mk.stderr.trim()}.`, { retryable: true });
  const local = new Map<string, Fingerprint>();
  await inBatches(files, 4, async (f) => {
    local.set(f, await localFingerprint(join(localDir, f)));
    await sftp.fastPut(join(localDir, f), `${remoteDir}/${f}`);
  });
  const remote = await remoteFingerprints(conn, files.map((f) => `${remoteDir}/${f}`));
  let bytes = 0;
  files.forEach((f, i) => {
    const l = local.get(f) as Fingerprint;
    const r = remote[i] ?? null;
    if (!r || r.size !== l.size || r.sha256 !== l.sha256) throw mismatch(conn, 'upload', f, r, l);
    bytes += l.size;
  });
  return { files: files.length, bytes };
}

/** A relative path that stays inside its root: no empty, `.` or `..` segment. */
function isInside(rel: string): boolean {
  return typeof rel === 'string' && rel.split('/').every((seg) => seg !== '' && seg !== '.' && seg !== '..');
}

/**
 * Copies a remote directory tree into a local one by SFTP and verifies every file's size and
 * SHA-256. With `listing` (made on the host by the persistent worker) the remote walk and the
 * hashing exec are skipped; the downloaded files are still checked against it. A listing with a
 * path escaping the directory is ignored.
 */
export async function downloadDir(conn: HostConnection, remoteDir: string, localDir: string, given?: OutputListing): Promise<StagingReport> {
  const listing = given && given.dirs.every(isInside) && given.files.every((f) => isInside(f.path)) ? given : undefined;
  const sftp = promisify(await conn.sftp());
  const { dirs, files } = listing ? { dirs: listing.dirs, files: listing.files.map((f) => f.path) } : await walkRemote(sftp, remoteDir);
  await mkdir(localDir, { recursive: true });
  for (const d of dirs) await mkdir(join(localDir, d), { recursive: true });
  const remote: (Fingerprint | null)[] = listing ? listing.files.map((f) => ({ size: f.size, sha256: f.sha256 })) : await remoteFingerprints(conn, files.map((f) => `${remoteDir}/${f}`));
  let bytes = 0;
  await inBatches(
    files.map((f, i) => [f, i] as const),
    4,
    async ([f, i]) => {
      await sftp.fastGet(`${remoteDir}/${f}`, join(localDir, f));
      const l = await localFingerprint(join(localDir, f));
      const r = remote[i] ?? null;
      if (!r || r.size !== l.size || r.sha256 !== l.sha256) throw mismatch(conn, 'download', f, r, l);
      bytes += l.size;
    },
  );
  return { files: files.length, bytes };
}
