/**
 * Masks secret values as `***` in what a step wrote, as CI systems do: a stream masker that
 * finds a value split across two writes (it holds back the last `longest - 1` bytes of each
 * chunk until the next one shows whether a value continues there), a file masker built on it
 * for an attempt's logs, and the same for error messages.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';

const STARS = Buffer.from('***');

/** Replaces each of `values` by `***` in a byte stream fed in chunks. */
export class Masker {
  readonly #values: readonly Buffer[];
  readonly #hold: number;
  #carry: Buffer = Buffer.alloc(0);
  /** How many values were masked so far. */
  masked = 0;

  constructor(values: readonly string[]) {
    // Longest first, so a value that contains another is masked whole.
    this.#values = [...new Set(values)].filter((v) => v !== '').map((v) => Buffer.from(v, 'utf8')).sort((a, b) => b.length - a.length);
    this.#hold = this.#values.length === 0 ? 0 : (this.#values[0] as Buffer).length - 1;
  }

  /** The masked bytes that are certain now; the rest is held for the next chunk (or `end`). */
  push(chunk: Buffer): Buffer {
    return this.#scan(this.#carry.length === 0 ? chunk : Buffer.concat([this.#carry, chunk]), false);
  }

  /** The held bytes, masked. */
  end(): Buffer {
    return this.#scan(this.#carry, true);
  }

  #scan(buf: Buffer, last: boolean): Buffer {
    // A value starting before `safe` lies wholly in `buf` if it is there at all.
    const safe = last ? buf.length : Math.max(0, buf.length - this.#hold);
    const out: Buffer[] = [];
    let i = 0;
    for (;;) {
      let start = -1;
      let len = 0;
      for (const v of this.#values) {
        const at = buf.indexOf(v, i);
        if (at !== -1 && (start === -1 || at < start)) [start, len] = [at, v.length];
      }
      if (start === -1 || start >= safe) break;
      out.push(buf.subarray(i, start), STARS);
      this.masked++;
      i = start + len;
    }
    const emit = Math.max(i, safe);
    out.push(buf.subarray(i, emit));
    this.#carry = Buffer.from(buf.subarray(emit));
    return Buffer.concat(out);
  }
}

/** `text` with each of `values` replaced by `***`. */
export function maskText(text: string, values: readonly string[]): string {
  let out = text;
  for (const v of [...values].sort((a, b) => b.length - a.length)) if (v !== '') out = out.split(v).join('***');
  return out;
}

/** Masks `values` in `err`'s message and stack, and in its causes' (in place); returns `err`. */
export function maskError(err: unknown, values: readonly string[]): unknown {
  let e: unknown = err;
  for (let depth = 0; depth < 8 && e instanceof Error; depth++) {
    const masked = maskText(e.message, values);
    if (masked !== e.message) e.message = masked;
    if (e.stack !== undefined) e.stack = maskText(e.stack, values);
    e = e.cause;
  }
  return err;
}

/**
 * Masks `values` in the file at `path`, streaming (a log may be large): written beside it and
 * renamed over it only when something was masked. A missing file is left missing.
 */
export async function maskFile(path: string, values: readonly string[]): Promise<void> {
  const st = await stat(path).catch(() => undefined);
  if (st === undefined || !st.isFile() || st.size === 0) return;
  const masker = new Masker(values);
  const tmp = `${path}.masking`;
  const transform = new Transform({
    transform(chunk: Buffer, _enc, done) {
      done(null, masker.push(chunk));
    },
    flush(done) {
      done(null, masker.end());
    },
  });
  try {
    await pipeline(createReadStream(path), transform, createWriteStream(tmp, { mode: st.mode & 0o777 }));
    if (masker.masked > 0) await rename(tmp, path);
  } finally {
    await rm(tmp, { force: true });
  }
}
