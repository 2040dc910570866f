/**
 * Suite size and seeding. `RELIABILITY_SCALE=full` runs the sizes of issue #9 (2,000-step crash
 * matrix with 30 kills, 1M-step soak); the default is sized for CI (about 5 minutes on 2 CPUs).
 * `RELIABILITY_SEED` changes every seeded choice (kill moments, graph shape, fuzz inputs).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { mulberry32 } from '../../testenv/rng.mjs';

/** `default` or `full`. */
export const SCALE = process.env.RELIABILITY_SCALE === 'full' ? 'full' : 'default';
const full = SCALE === 'full';

/** Sizes per mode. */
export const SIZES = {
  /** Steps in the crash-matrix pipeline. */
  crashSteps: full ? 2000 : 300,
  /** SIGKILLs delivered during the crash matrix. */
  kills: full ? 30 : 10,
  /** Steps in the pipeline shared by the concurrent runners. */
  concurrentSteps: full ? 1000 : 240,
  /** Steps of the in-memory soak run. */
  soakSteps: full ? 1_000_000 : 200_000,
  /** fast-check runs per property. */
  fuzzRuns: full ? 2000 : 300,
} as const;

/** The seed of every random choice. */
export const SEED = Number(process.env.RELIABILITY_SEED ?? 20261130) >>> 0;

/** A seeded PRNG (mulberry32) returning floats in [0, 1). */
export const rng = mulberry32;

const repo = fileURLToPath(new URL('../../../', import.meta.url));

/** Child processes import the BUILT packages: fail early, naming the fix, when a dist is missing. */
export function assertBuilt(): void {
  for (const pkg of ['core', 'runner', 'remote-ssh']) {
    if (!existsSync(`${repo}packages/${pkg}/dist/index.js`)) {
      throw new Error(`packages/${pkg}/dist is missing: run \`npx nx run-many -t build --output-style=static\` at the repo root first.`);
    }
  }
}
