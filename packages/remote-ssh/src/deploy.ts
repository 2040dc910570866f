import { randomBytes } from 'node:crypto';
import { CairnError } from '@cairn/core';
import { Bundler, type CodeBundle as BaseBundle } from '@cairn/runner/executor';
import type { HostConnection } from './connection.js';
import { shScript } from './quote.js';
import { CODE_CHECK_SCRIPT } from './remote-script.js';
import { promisify } from './sftp.js';

/** One self-contained ES module (the runner kit's bundle): what gets uploaded. */
export interface CodeBundle extends BaseBundle {
  /** Directory under the work dir it goes to: `code` for bundles, `sources` for a command step's staged sources. @default 'code' */
  readonly area?: 'code' | 'sources';
}

export { Bundler };

/** Remote path of a bundle under a work dir. */
export function bundlePath(workDir: string, b: CodeBundle): string {
  return `${bundleDir(workDir, b)}/${b.fileName}`;
}

function bundleDir(workDir: string, b: CodeBundle): string {
  return `${workDir}/${b.area ?? 'code'}/${b.hash}`;
}

/**
 * Uploads bundles to `<workDir>/code/<hash>/` over SFTP when the file there is missing or its
 * content differs (checked by SHA-256 on the host, once per host and bundle: never by size, a
 * same-size planted file is replaced). Writes to a temp name (0600) and renames, so concurrent
 * uploads and readers never see a partial file, then checks the content again. The launch and
 * the persistent worker check it once more right before they run it.
 */
export class CodeUploader {
  readonly #done = new Map<string, Promise<string>>();

  ensure(conn: HostConnection, workDir: string, b: CodeBundle): Promise<string> {
    const key = this.#key(conn, workDir, b);
    let p = this.#done.get(key);
    if (!p) {
      p = this.#upload(conn, workDir, b);
      this.#done.set(key, p);
      p.catch(() => this.#done.delete(key));
    }
    return p;
  }

  /** Forgets that `b` is on the host (it did not verify at launch): the next `ensure` checks and uploads again. */
  forget(conn: HostConnection, workDir: string, b: CodeBundle): void {
    this.#done.delete(this.#key(conn, workDir, b));
  }

  #key(conn: HostConnection, workDir: string, b: CodeBundle): string {
    return `${conn.target.name}\0${workDir}\0${bundlePath('', b)}`;
  }

  async #check(conn: HostConnection, target: string, b: CodeBundle, dir: string): Promise<boolean> {
    const r = await conn.exec(shScript(CODE_CHECK_SCRIPT, [target, b.sha256, dir]));
    if (r.code !== 0) throw new CairnError('CAIRN_REMOTE', `SSH host "${conn.target.name}": cannot create ${dir}: ${r.stderr.trim()}. Check workDir is writable by ${conn.target.user}.`, { retryable: true });
    return r.stdout.toString('utf8').trim() === 'ok';
  }

  async #upload(conn: HostConnection, workDir: string, b: CodeBundle): Promise<string> {
    const target = bundlePath(workDir, b);
    const dir = bundleDir(workDir, b);
    if (await this.#check(conn, target, b, dir)) return target;
    const sftp = promisify(await conn.sftp());
    const tmp = `${target}.${randomBytes(6).toString('hex')}.tmp`;
    await sftp.writeFile(tmp, Buffer.from(b.bytes), 0o600);
    await sftp.rename(tmp, target);
    if (!(await this.#check(conn, target, b, dir))) {
      throw new CairnError('CAIRN_REMOTE', `SSH host "${conn.target.name}": the uploaded ${target} does not match its SHA-256 ${b.sha256} (the transfer was corrupted, or the file was replaced at once). It is uploaded again with the step's retry.`, { retryable: true });
    }
    return target;
  }
}

/** A bundle still did not match its hash after it was uploaded again: refused, never run. */
export function codeMismatch(conn: HostConnection, workDir: string, what: string, detail: string): CairnError {
  return new CairnError(
    'CAIRN_REMOTE',
    `SSH host "${conn.target.name}": the code for ${what.startsWith('the ') ? what : `step "${what}"`} still does not match its SHA-256 after it was uploaded again (${detail.trim()}); it was not run. Something on the host is replacing files in ${workDir}: check who can write there.`,
    { retryable: true },
  );
}
