/**
 * `cairn run --typecheck`: type-checks the pipeline's project with `tsc --noEmit` before
 * anything runs. The CLI loads TypeScript without checking types, so a typo in an input name
 * (`tokns:`) otherwise reaches the step as `undefined`. The project is the nearest
 * `tsconfig.json` above the pipeline; without one, the pipeline file alone with Node's module
 * rules. `tsc` is the project's own TypeScript, else the one beside the CLI.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { CairnError } from '@cairn/core';
import { cliError } from './errors.js';

/** Lines of tsc's output kept in the error. */
const MAX_LINES = 40;

/** The nearest `tsconfig.json` from `dir` upwards. */
function nearestTsconfig(dir: string): string | undefined {
  for (let d = dir; ; d = dirname(d)) {
    const candidate = join(d, 'tsconfig.json');
    if (existsSync(candidate)) return candidate;
    if (dirname(d) === d) return undefined;
  }
}

/** `typescript/bin/tsc` as the pipeline's project resolves it, else as the CLI does. */
function findTsc(pipeline: string): string {
  for (const from of [pipeline, import.meta.url]) {
    try {
      return createRequire(from).resolve('typescript/bin/tsc');
    } catch {
      // next candidate
    }
  }
  throw cliError('CAIRN_TYPECHECK', '--typecheck needs TypeScript, and none was found from the pipeline or the CLI.', 'Install it in the project (npm install --save-dev typescript), or run without --typecheck.');
}

/** Runs tsc on the pipeline's project; resolves when it type-checks, else throws `CAIRN_TYPECHECK` quoting tsc's errors. */
export async function typecheckPipeline(file: string, cwd: string): Promise<void> {
  const path = resolve(cwd, file);
  const tsc = findTsc(path);
  const tsconfig = nearestTsconfig(dirname(path));
  const args =
    tsconfig !== undefined
      ? ['-p', tsconfig, '--noEmit']
      : [path, '--noEmit', '--allowJs', '--checkJs', 'false', '--module', 'esnext', '--moduleResolution', 'bundler', '--target', 'es2022', '--strict', '--skipLibCheck'];
  const output = await new Promise<string | undefined>((done, fail) => {
    execFile(process.execPath, [tsc, ...args], { cwd: dirname(path), maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err === null) return done(undefined);
      if (typeof (err as { code?: unknown }).code !== 'number') return fail(new CairnError('CAIRN_TYPECHECK', `--typecheck could not run tsc (${tsc}): ${err.message}`, { cause: err }));
      done(`${stdout}${stderr}`.trim());
    });
  });
  if (output === undefined) return;
  const lines = output.split('\n');
  const shown = lines.slice(0, MAX_LINES).join('\n') + (lines.length > MAX_LINES ? `\n… (${lines.length - MAX_LINES} more lines: run tsc yourself)` : '');
  throw cliError('CAIRN_TYPECHECK', `The pipeline does not type-check (tsc ${tsconfig !== undefined ? `-p ${tsconfig}` : path}):\n${shown}\n`, 'Fix these errors, or run without --typecheck.');
}
