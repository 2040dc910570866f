/**
 * Where the built worker files are. The process, SSH and Slurm executors run
 * `node <workerEntryPath()> --task … --result …`; the threads executor loads
 * `threadWorkerPath()` into its pool.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CairnError } from '@cairn/core';

function builtFile(name: string): string {
  // Running from TypeScript sources (src/worker/*.ts, e.g. under vitest) the built files are in
  // ../../dist; from the build (dist/*.js, dist/*.cjs, chunks) they sit next to this code.
  // tsup's `shims` gives the CJS build an `import.meta.url`.
  const here = import.meta.url;
  const rel = fileURLToPath(here).endsWith('.ts') ? `../../dist/${name}` : `./${name}`;
  return fileURLToPath(new URL(rel, here));
}

/** Absolute path of the built worker process entry (`dist/worker-entry.js`). */
export function workerEntryPath(): string {
  return builtFile('worker-entry.js');
}

/** Absolute path of the built thread-pool worker (`dist/thread-worker.js`). */
export function threadWorkerPath(): string {
  return builtFile('thread-worker.js');
}

/** Throws `CAIRN_EXECUTOR` when a built worker file is missing (the package was not built). */
export function assertBuilt(file: string, executor: string): void {
  if (!existsSync(file)) {
    throw new CairnError('CAIRN_EXECUTOR', `The "${executor}" executor needs ${file}, which does not exist; build @cairn/runner (npx tsup in packages/runner).`);
  }
}
