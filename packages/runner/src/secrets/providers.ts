/**
 * Looks a secret up in one provider (synchronously: a run resolves every secret it knows of
 * before its first step starts, and a look-up is small). Errors never carry a value.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { CairnError } from '@cairn/core';
import type { CommandProvider, SecretProvider } from './types.js';

const COMMAND_TIMEOUT_MS = 10_000;

/** The value of `name` in `provider`, or undefined when it does not have it. */
export function lookUp(provider: SecretProvider, name: string, step: string, files: Map<string, ReadonlyMap<string, string>>): string | undefined {
  switch (provider.type) {
    case 'env':
      return process.env[`${provider.prefix ?? ''}${name}`];
    case 'file': {
      const path = resolve(provider.path);
      let entries = files.get(path);
      if (entries === undefined) {
        entries = readSecretFile(path, step);
        files.set(path, entries);
      }
      return entries.get(name);
    }
    case 'command':
      return fromCommand(provider, name);
  }
}

/** Reads a `NAME=value` file after checking it is a regular file only its owner may read. */
function readSecretFile(path: string, step: string): ReadonlyMap<string, string> {
  let mode: number;
  try {
    const st = statSync(path);
    if (!st.isFile()) throw new CairnError('CAIRN_SECRET_FILE_MODE', `Secret file ${path} (needed by step "${step}") is not a regular file; point secrets.providers at a file of NAME=value lines.`, { step });
    mode = st.mode & 0o777;
  } catch (err) {
    if (err instanceof CairnError) throw err;
    throw new CairnError('CAIRN_SECRET_UNRESOLVED', `Secret file ${path} (needed by step "${step}") cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)}); create it with mode 0600, or remove it from secrets.providers.`, { step, cause: err });
  }
  if ((mode & 0o077) !== 0) {
    throw new CairnError(
      'CAIRN_SECRET_FILE_MODE',
      `Secret file ${path} is readable or writable by others (mode ${mode.toString(8).padStart(3, '0')}); run chmod 600 ${path} (step "${step}" needs a secret from it).`,
      { step },
    );
  }
  const out = new Map<string, string>();
  for (const line of readFileSync(path, 'utf8').split(/\r?\n/)) {
    if (line.trim() === '' || line.trimStart().startsWith('#')) continue;
    const eq = line.indexOf('=');
    if (eq <= 0) continue;
    out.set(line.slice(0, eq).trim(), line.slice(eq + 1));
  }
  return out;
}

/** Runs the provider's program with `name` appended; its stdout (one trailing newline dropped) when it exits 0 with some. */
function fromCommand(provider: CommandProvider, name: string): string | undefined {
  const [file, ...args] = provider.command;
  try {
    const out = execFileSync(file as string, [...args, name], { encoding: 'utf8', timeout: provider.timeoutMs ?? COMMAND_TIMEOUT_MS, killSignal: 'SIGKILL', stdio: ['ignore', 'pipe', 'ignore'] });
    const value = out.endsWith('\r\n') ? out.slice(0, -2) : out.endsWith('\n') ? out.slice(0, -1) : out;
    return value === '' ? undefined : value;
  } catch {
    // Not found there (or the program failed): the next provider is asked.
    return undefined;
  }
}
