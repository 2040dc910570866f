/**
 * The names (never the values) of the secrets an attempt's step declares, in a small file beside
 * the attempt's logs directory (`.cairn/logs/attempt-3.stdout` → `.cairn/attempt-3.secret-names`),
 * written by the runner before the executor starts the attempt and marked `masked` once the
 * attempt's logs are masked (attempt-mask.ts). A tool that shows a log while the attempt runs
 * (`cairn logs`, `cairn ui`) reads it to know what to mask (live-mask.ts): no file means the step
 * declares no secret. It is published with the output, as the logs are.
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';

/** What the file holds. */
export interface AttemptSecretNames {
  /** The secrets the step declares. */
  readonly names: readonly string[];
  /** True once the attempt's logs were masked (it ended): they may be shown as they are. */
  readonly masked: boolean;
}

/** The names file of the attempt whose stdout log is `stdoutLog`. */
export function secretNamesFileOf(stdoutLog: string): string {
  return `${dirname(dirname(stdoutLog))}/${basename(stdoutLog).replace(/\.stdout$/, '')}.secret-names`;
}

/** Writes the names file before the attempt starts (synchronously: no log byte may come first). */
export function writeSecretNames(logs: { readonly stdout: string }, names: readonly string[]): void {
  const file = secretNamesFileOf(logs.stdout);
  mkdirSync(dirname(file), { recursive: true });
  // Written beside and renamed: a reader never sees it half written.
  writeFileSync(`${file}.tmp`, JSON.stringify({ names, masked: false } satisfies AttemptSecretNames));
  renameSync(`${file}.tmp`, file);
}

/** Marks the names file `masked` (the attempt's logs were masked); nothing when the step declared none. */
export async function markSecretNamesMasked(logs: { readonly stdout: string }): Promise<void> {
  const file = secretNamesFileOf(logs.stdout);
  const names = await readSecretNames(logs);
  if (names === undefined || names === 'unreadable' || names.masked) return;
  await writeFile(`${file}.tmp`, JSON.stringify({ names: names.names, masked: true } satisfies AttemptSecretNames));
  await rename(`${file}.tmp`, file);
}

/** Reads a file: its text, or null when it does not exist (other failures throw). */
export type ReadText = (path: string) => Promise<string | null>;

const readLocal: ReadText = (path) =>
  readFile(path, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null;
    throw err;
  });

/**
 * The names file of an attempt (read with `read`, local files by default): undefined when there
 * is none (the step declares no secret), `'unreadable'` when it exists but cannot be read or
 * parsed (a reader must then assume the step has secrets).
 */
export async function readSecretNames(logs: { readonly stdout: string }, read: ReadText = readLocal): Promise<AttemptSecretNames | 'unreadable' | undefined> {
  let text: string | null;
  try {
    text = await read(secretNamesFileOf(logs.stdout));
  } catch {
    return 'unreadable';
  }
  if (text === null) return undefined;
  try {
    const v = JSON.parse(text) as { names?: unknown; masked?: unknown };
    if (!Array.isArray(v.names) || !v.names.every((n) => typeof n === 'string')) return 'unreadable';
    return { names: v.names as string[], masked: v.masked === true };
  } catch {
    return 'unreadable';
  }
}
