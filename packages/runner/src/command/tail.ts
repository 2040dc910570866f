/**
 * The last lines of a program's stderr, for its failure message: read back from the log file
 * (from where this attempt began writing), or kept from the stream in a small ring.
 */
import { open } from 'node:fs/promises';

/** Bytes of stderr looked at. */
export const TAIL_BYTES = 4096;
/** Lines of stderr quoted. */
export const TAIL_LINES = 20;

/** The last {@link TAIL_LINES} lines of `text`, trimmed; `cut`: `text` starts mid-stream, so its first line is partial and dropped. */
export function lastLines(text: string, cut = false): string {
  const lines = text.replace(/\s+$/, '').split('\n');
  if (cut && lines.length > 1) lines.shift();
  return lines.slice(-TAIL_LINES).join('\n');
}

/** The tail of what was appended to `path` after byte `from`. */
export async function fileTail(path: string, from: number): Promise<string> {
  const handle = await open(path, 'r').catch(() => undefined);
  if (handle === undefined) return '';
  try {
    const { size } = await handle.stat();
    const start = Math.max(from, size - TAIL_BYTES);
    if (size <= start) return '';
    const buf = Buffer.alloc(size - start);
    await handle.read(buf, 0, buf.length, start);
    return lastLines(buf.toString('utf8'), start > from);
  } finally {
    await handle.close();
  }
}

/** Keeps the last {@link TAIL_BYTES} bytes of a stream. */
export class TailRing {
  #chunks: Buffer[] = [];
  #bytes = 0;
  #dropped = false;

  push(chunk: Buffer): void {
    this.#chunks.push(chunk);
    this.#bytes += chunk.length;
    while (this.#chunks.length > 1 && this.#bytes - (this.#chunks[0] as Buffer).length >= TAIL_BYTES) {
      this.#bytes -= (this.#chunks.shift() as Buffer).length;
      this.#dropped = true;
    }
  }

  text(): string {
    const all = Buffer.concat(this.#chunks);
    const start = Math.max(0, all.length - TAIL_BYTES);
    return lastLines(all.subarray(start).toString('utf8'), start > 0 || this.#dropped);
  }
}
