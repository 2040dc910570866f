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

/**
 * Replaces each of `values` by `***` in a byte stream fed in chunks. The one masking rule: the
 * earliest value wins, the longest where several start at the same byte; a value is masked
 * whole or not yet emitted. Each chunk's masked bytes are given back at once except a tail that
 * could be the start of a value (at most the longest value's length - 1 bytes), held until the
 * next chunk or `end` shows whether the value continues there.
 */
export class Masker {
  readonly #values: readonly Buffer[];
  #carry: Buffer = Buffer.alloc(0);
  /** How many values were masked so far. */
  masked = 0;

  constructor(values: readonly string[]) {
    // Longest first, so a value that contains another is masked whole.
    this.#values = [...new Set(values)].filter((v) => v !== '').map((v) => Buffer.from(v, 'utf8')).sort((a, b) => b.length - a.length);
  }

  /** The masked bytes that are certain now; a possible start of a value is held for the next chunk (or `end`). */
  push(chunk: Buffer | Uint8Array): Buffer {
    const buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    return this.#scan(this.#carry.length === 0 ? buf : Buffer.concat([this.#carry, buf]), false);
  }

  /** The held bytes, masked (the stream ended). */
  end(): Buffer {
    return this.#scan(this.#carry, true);
  }

  /** How many bytes are held back (a possible start of a value). */
  get held(): number {
    return this.#carry.length;
  }

  #scan(buf: Buffer, last: boolean): Buffer {
    const out: Buffer[] = [];
    let i = 0;
    for (;;) {
      // Bytes from `hold` on may begin a value the next chunk completes: nothing there is final yet.
      const hold = last ? buf.length : this.#heldFrom(buf, i);
      let start = -1;
      let len = 0;
      for (const v of this.#values) {
        const at = buf.indexOf(v, i);
        if (at !== -1 && (start === -1 || at < start)) [start, len] = [at, v.length];
      }
      if (start === -1 || start >= hold) {
        out.push(buf.subarray(i, hold));
        this.#carry = Buffer.from(buf.subarray(hold));
        return out.length === 1 ? (out[0] as Buffer) : Buffer.concat(out);
      }
      out.push(buf.subarray(i, start), STARS);
      this.masked++;
      i = start + len;
    }
  }

  /** The first offset at or after `from` whose bytes to the end are a proper prefix of some value (the buffer's length when none). */
  #heldFrom(buf: Buffer, from: number): number {
    const longest = this.#values[0]?.length ?? 0;
    for (let k = Math.max(from, buf.length - longest + 1); k < buf.length; k++) {
      const n = buf.length - k;
      for (const v of this.#values) if (v.length > n && v.compare(buf, k, buf.length, 0, n) === 0) return k;
    }
    return buf.length;
  }
}

/** `text` with each of `values` replaced by `***`. */
export function maskText(text: string, values: readonly string[]): string {
  if (values.length === 0 || !values.some((v) => v !== '' && text.includes(v))) return text;
  const m = new Masker(values);
  return Buffer.concat([m.push(Buffer.from(text, 'utf8')), m.end()]).toString('utf8');
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

/** `text` (a log still being written) with `values` masked, less a tail that may be the start of a value. */
export function maskSoFar(text: string, values: readonly string[]): string {
  return new Masker(values).push(Buffer.from(text, 'utf8')).toString('utf8');
}
