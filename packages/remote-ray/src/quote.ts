/** Quoting for the POSIX shell that runs a job's entrypoint. */

/** Quotes a string for `sh` (single quotes; a `'` inside becomes `'\''`). */
export function shQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
