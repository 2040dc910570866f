/** The version of `@cairn/cli`, read from its package.json (next to `src/` and `dist/` alike). */
import { readFileSync } from 'node:fs';

let cached: string | undefined;

/** `0.1.0`, or `unknown` when the package.json cannot be read. */
export function cliVersion(): string {
  if (cached === undefined) {
    try {
      cached = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: string }).version ?? 'unknown';
    } catch {
      cached = 'unknown';
    }
  }
  return cached;
}
