/**
 * Where a command attempt's context and result files live on this host: one private directory
 * per process (made once, removed when the process exits), two files per attempt unlinked when
 * it ends. A directory per attempt cost a mkdtemp and an rmdir each (an rmdir is ~3 ms on an ext4
 * mounted with `discard`; bench row "local, 1 at a time" of tools/bench/command.bench.mjs);
 * unlinking a file costs microseconds.
 */
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let dir: string | undefined;
let next = 0;

function scratchDir(): string {
  if (dir === undefined) {
    // mkdtemp: 0700, so another user of the host cannot read the context (it holds the step's inputs).
    const made = mkdtempSync(join(tmpdir(), `cairn-command-${process.pid}-`));
    process.once('exit', () => rmSync(made, { recursive: true, force: true }));
    dir = made;
  }
  return dir;
}

/** One attempt's files: where to write its context, where the program may write its result. */
export interface AttemptFiles {
  /** `$CAIRN_CONTEXT`. */
  readonly contextPath: string;
  /** `$CAIRN_RESULT`. */
  readonly resultPath: string;
}

/** Fresh file names for one attempt (nothing is created yet). */
export function attemptFiles(): AttemptFiles {
  const base = join(scratchDir(), String(++next));
  return { contextPath: `${base}.context.json`, resultPath: `${base}.result.json` };
}

/**
 * Writes the context file; makes the directory again if something (a tmp cleaner) removed it.
 * Synchronous, as the removal below: a small file in the temp directory, where each round trip
 * through libuv's pool cost more than the write (bench row "local, 1 at a time").
 */
export function writeContext(files: AttemptFiles, text: string): void {
  try {
    writeFileSync(files.contextPath, text, { mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || dir === undefined) throw err;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(files.contextPath, text, { mode: 0o600 });
  }
}

/** Removes the attempt's files (gone already is fine); the result file only when `result` says it may be there. */
export function removeAttemptFiles(files: AttemptFiles, result = true): void {
  for (const path of result ? [files.contextPath, files.resultPath] : [files.contextPath]) {
    try {
      unlinkSync(path);
    } catch {
      // Not written, or removed already.
    }
  }
}
