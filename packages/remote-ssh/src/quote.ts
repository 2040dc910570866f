import { CairnError } from '@cairn/core';

/**
 * Quotes one argument for a POSIX shell: wraps it in single quotes, writing each embedded
 * `'` as `'\''`. Inside single quotes nothing is special (`$`, backticks, `\`, newlines), so
 * the shell passes the bytes through unchanged. NUL cannot be passed in an argument at all.
 */
export function shQuote(value: string): string {
  if (typeof value !== 'string') throw new CairnError('CAIRN_CONFIG', `shQuote: expected a string, got ${typeof value}.`);
  if (value.includes('\0')) throw new CairnError('CAIRN_CONFIG', `Cannot pass a value containing a NUL byte to a remote command: ${JSON.stringify(value)}.`);
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/**
 * A remote command line that runs `script` with `sh` and the given positional arguments
 * (`$1`, `$2`…), under umask 077: everything it creates (job dirs, tasks, logs, results, the
 * processes it starts and what they create) is the login user's alone. The script should be a
 * constant: every variable part travels as a quoted argument, so no value is ever parsed as
 * shell code.
 */
export function shScript(script: string, args: readonly string[] = []): string {
  return ['umask 077 && exec sh -c', shQuote(script), 'cairn-sh', ...args.map(shQuote)].join(' ');
}
