/** Quoting for the generated bash scripts. */

/** Quotes a string for bash (single quotes). */
export function shQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
