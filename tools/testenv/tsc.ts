/**
 * Type tests: compiles a tsconfig project with the workspace's `tsc` and returns what it
 * printed ('' when the project type-checks). A project with `@ts-expect-error` lines
 * type-checks only when each of them really is an error.
 */
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

/** The output of `tsc -p project` (a tsconfig path): '' when it compiles without errors. */
export function tscOutput(project: string): string {
  try {
    return execFileSync(process.execPath, [tsc, '-p', project], { encoding: 'utf8' });
  } catch (e) {
    return String((e as { stdout?: string }).stdout);
  }
}
