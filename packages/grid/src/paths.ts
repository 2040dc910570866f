/** Where the built pack worker is (`dist/pack-worker.js`), run by packed jobs on the compute nodes. */
import { fileURLToPath } from 'node:url';

/** Absolute path of the built pack worker. */
export function packWorkerPath(): string {
  // From TypeScript sources (src/paths.ts, e.g. under vitest) the build is in ../dist; from the
  // build (dist/*.js, dist/*.cjs) it sits next to this code. tsup's `shims` gives the CJS build
  // an `import.meta.url`.
  const here = import.meta.url;
  const rel = fileURLToPath(here).endsWith('.ts') ? '../dist/pack-worker.js' : './pack-worker.js';
  return fileURLToPath(new URL(rel, here));
}
