/**
 * Follows the log files of the attempts running now, so the live display can print what steps
 * write (their `console.log`s, `ctx.log` lines, a child process's output) as it arrives. Reads
 * are synchronous and small: only the running attempts are followed, each file from where the
 * last read stopped.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { basename, join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';

/** One line a step wrote. */
export interface OutputLine {
  /** The step's key (its output path). */
  readonly key: string;
  /** Step name. */
  readonly step: string;
  /** Which stream. */
  readonly stream: 'stdout' | 'stderr';
  /** The line, without its newline. */
  readonly line: string;
}

interface Followed {
  /** Where the file is now (it moves when its attempt is committed). */
  path: string;
  readonly stream: 'stdout' | 'stderr';
  offset: number;
  partial: string;
  readonly decoder: StringDecoder;
}

/** Most bytes read from one file per poll, so one chatty step cannot stall the display. */
const MAX_READ = 256 * 1024;

/** The log files of running attempts, followed. */
export class StepOutput {
  readonly #followed = new Map<string, { step: string; files: Followed[] }>();
  readonly #buf = Buffer.alloc(64 * 1024);

  /** Starts following one attempt's files (a later attempt of the same step replaces it). */
  follow(key: string, step: string, files: { readonly stdout: string; readonly stderr: string }): void {
    const make = (path: string, stream: 'stdout' | 'stderr'): Followed => ({ path, stream, offset: 0, partial: '', decoder: new StringDecoder('utf8') });
    this.#followed.set(key, { step, files: [make(files.stdout, 'stdout'), make(files.stderr, 'stderr')] });
  }

  /** True while `key` is followed. */
  has(key: string): boolean {
    return this.#followed.has(key);
  }

  /** New complete lines of every followed attempt. */
  poll(): OutputLine[] {
    const out: OutputLine[] = [];
    for (const [key, f] of this.#followed) for (const file of f.files) this.#read(key, f.step, file, false, out);
    return out;
  }

  /** Everything left of `key`'s files (a last line without its newline too), then stops following it. */
  drain(key: string): OutputLine[] {
    const f = this.#followed.get(key);
    if (f === undefined) return [];
    this.#followed.delete(key);
    const out: OutputLine[] = [];
    for (const file of f.files) this.#read(key, f.step, file, true, out);
    return out;
  }

  #read(key: string, step: string, file: Followed, last: boolean, out: OutputLine[]): void {
    let fd: number;
    try {
      fd = openSync(file.path, 'r');
    } catch {
      // A running attempt's logs live in its staged directory, which the commit renames to the
      // step's output path (`key`): read on from the same file there.
      const committed = join(key, '.cairn', 'logs', basename(file.path));
      try {
        fd = openSync(committed, 'r');
        file.path = committed;
      } catch {
        return; // nothing written yet
      }
    }
    try {
      const size = fstatSync(fd).size;
      let budget = last ? Number.POSITIVE_INFINITY : MAX_READ;
      while (file.offset < size && budget > 0) {
        const n = readSync(fd, this.#buf, 0, Math.min(this.#buf.length, size - file.offset), file.offset);
        if (n === 0) break;
        file.offset += n;
        budget -= n;
        const lines = (file.partial + file.decoder.write(this.#buf.subarray(0, n))).split('\n');
        file.partial = lines.pop() ?? '';
        for (const line of lines) out.push({ key, step, stream: file.stream, line });
      }
    } finally {
      closeSync(fd);
    }
    if (last) {
      const rest = file.partial + file.decoder.end();
      if (rest !== '') out.push({ key, step, stream: file.stream, line: rest });
    }
  }
}
