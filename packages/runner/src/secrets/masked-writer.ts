/**
 * Masking on write: where the runner itself writes an attempt's log bytes (the `inline` and
 * `threads` loggers and captured stdio, the SSH executor's appends of streamed bytes, the grid and
 * Ray metadata lines), each stream goes through a {@link Masker}, so the file never holds a value
 * the step declared, not even while the attempt runs (a value split across two writes included).
 */
import { Masker } from './mask.js';

/** The two log streams. */
export type LogStream = 'stdout' | 'stderr';

/** Writes to an attempt's two logs with secret values masked. */
export interface MaskedLogWriter {
  /** Writes `chunk` (masked; a possible start of a value is held until the next write or `end`). */
  write(stream: LogStream, chunk: string | Uint8Array): void;
  /** Writes what each stream still holds (call once, when the attempt's writing ends). */
  end(): void;
}

/**
 * A writer over `write` that masks the values of `secrets` (a step's declared secrets, by name);
 * with none, chunks pass through unchanged.
 */
export function maskedLogWriter(secrets: Readonly<Record<string, string>> | undefined, write: (stream: LogStream, bytes: string | Uint8Array) => void): MaskedLogWriter {
  const values = secrets === undefined ? [] : Object.values(secrets).filter((v) => v !== '');
  if (values.length === 0) return { write, end: () => undefined };
  const maskers = { stdout: new Masker(values), stderr: new Masker(values) };
  return {
    write(stream, chunk) {
      const out = maskers[stream].push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk);
      if (out.length > 0) write(stream, out);
    },
    end() {
      for (const stream of ['stdout', 'stderr'] as const) {
        const out = maskers[stream].end();
        if (out.length > 0) write(stream, out);
      }
    },
  };
}
