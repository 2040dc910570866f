/** `cairn bench`: runs the repository's benchmarks (`node tools/bench/run.mjs`). */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { CliContext } from '../context.js';
import { usageError } from '../errors.js';

/** The nearest `tools/bench/run.mjs` from `cwd` upwards. */
function findBench(cwd: string): string | undefined {
  let dir = cwd;
  for (;;) {
    const candidate = join(dir, 'tools', 'bench', 'run.mjs');
    if (existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** Runs the benchmarks with the given arguments; resolves with their exit code. */
export async function benchCommand(ctx: CliContext, args: readonly string[]): Promise<number> {
  const script = findBench(ctx.cwd);
  if (script === undefined) {
    throw usageError('No tools/bench/run.mjs was found here or in a parent directory.', 'Run cairn bench from inside the Cairn repository.');
  }
  const child = spawn(process.execPath, [script, ...args], { stdio: 'inherit', cwd: dirname(dirname(dirname(script))), env: ctx.env });
  return await new Promise<number>((resolve) => {
    child.on('exit', (code, signal) => resolve(code ?? (signal === 'SIGINT' ? 130 : 1)));
  });
}
