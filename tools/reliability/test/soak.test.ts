/**
 * Soak: a long no-op run through the in-memory store completes with bounded memory per step.
 * The same run through a store that keeps nothing isolates what the runner itself keeps.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, SIZES } from './env.js';
import { FIXTURES } from './children.js';
import { record } from './metrics.js';

interface SoakResult {
  store: string;
  steps: number;
  counts: Record<string, number>;
  seconds: number;
  peakRss: number;
  bytesPerStep: number;
  retainedPerStep: number;
}

function soak(store: 'memory' | 'null'): SoakResult {
  const out = execFileSync(process.execPath, ['--expose-gc', '--max-old-space-size=6144', join(FIXTURES, 'soak.mjs'), String(SIZES.soakSteps), store], { encoding: 'utf8', maxBuffer: 1 << 20 });
  return JSON.parse(out.trim().split('\n').at(-1) as string) as SoakResult;
}

// Bounds at about 1.5× what a 2-CPU machine measures (memory store: 2.7 KB/step peak; the runner
// alone: 1.6 KB/step peak, 0.8 KB/step still reachable after the run).
const PEAK_PER_STEP = { memory: 4096, null: 2560 } as const;

describe(`soak (${SIZES.soakSteps.toLocaleString('en')} no-op steps)`, () => {
  beforeAll(() => assertBuilt());

  it.each(['memory', 'null'] as const)('completes through the %s store with bounded memory per step', (store) => {
    const r = soak(store);
    record(`soak-${store}`, { steps: r.steps, seconds: Number(r.seconds.toFixed(1)), peakRssMiB: Math.round(r.peakRss / 2 ** 20), peakBytesPerStep: r.bytesPerStep, retainedBytesPerStep: r.retainedPerStep });
    expect(r.counts).toEqual({ succeeded: SIZES.soakSteps + 1 });
    expect(r.bytesPerStep).toBeLessThan(PEAK_PER_STEP[store]);
    if (store === 'null') expect(r.retainedPerStep).toBeLessThan(1200);
  });
});
