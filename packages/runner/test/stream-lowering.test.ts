/**
 * A pipeline streamed from an iterable is lowered in linear work (issue 32). Each pulled handle
 * was lowered in its own `lower()` call, which walked its whole upstream again: handles of one
 * layered graph from a generator cost 1.7 s at 1,000 and 15.1 s at 4,000 (0.39 s as an array).
 * The run's lowering session lowers only what earlier pulls did not.
 */
import { describe, expect, it } from 'vitest';
import { type ArtifactStep, apply, OUT } from '@cairn/core';
import { loweringWork } from '@cairn/core/internal';
import { MemoryStore, StepRunner } from '../src/index.js';

const quiet = { info() {}, warn() {}, error() {} };

/** `n` handles of a layered graph (layers of ~√n; each step reads 1–3 steps of the layer before), dependencies first. */
function layered(n: number): ArtifactStep<unknown>[] {
  const width = Math.max(1, Math.round(Math.sqrt(n)));
  const hs: ArtifactStep<unknown>[] = [];
  for (let i = 0; i < n; i++) {
    const layerStart = i - (i % width);
    const prev = layerStart - width;
    const deps: ArtifactStep<unknown>[] = [];
    if (prev >= 0) for (let k = 0; k < 1 + (i % 3); k++) deps.push(hs[prev + ((i * 7 + k * 3) % width)] as ArtifactStep<unknown>);
    hs.push(apply({ name: `s${i}`, version: 'v1', inputs: { i, deps: [...new Set(deps)], out: OUT }, fn: () => i }));
  }
  return hs;
}

function* one(hs: readonly ArtifactStep<unknown>[]): Generator<ArtifactStep<unknown>> {
  for (const h of hs) yield h;
}

async function* oneAsync(hs: readonly ArtifactStep<unknown>[]): AsyncGenerator<ArtifactStep<unknown>> {
  for (const h of hs) yield h;
}

/** Handles made into specs while running `n` streamed handles (fresh handles each time). */
async function streamedWork(n: number, async = false): Promise<number> {
  const hs = layered(n);
  const before = loweringWork.nodes;
  const s = await new StepRunner({ prefix: '/p', store: new MemoryStore(), logger: quiet }).run(async ? oneAsync(hs) : one(hs), { handleSigint: false });
  expect(s.counts.succeeded).toBe(n);
  return loweringWork.nodes - before;
}

describe('a streamed pipeline is lowered in linear work', () => {
  it('each handle pulled from a generator is lowered once, not once per dependent pulled after it', async () => {
    const small = await streamedWork(300);
    const large = await streamedWork(1200);
    // Each step once (re-lowered quadratic: ~n²/2 for a layered graph, 45k and 720k).
    expect(small).toBeLessThanOrEqual(300);
    expect(large).toBeLessThanOrEqual(1200);
    // 4× the steps, at most 4× the work.
    expect(large / small).toBeLessThanOrEqual(4);
  });

  it('the same from an async generator, with the identities an array gets', async () => {
    expect(await streamedWork(400, true)).toBeLessThanOrEqual(400);
    const store = new MemoryStore();
    const first = await new StepRunner({ prefix: '/p', store, logger: quiet }).run(one(layered(400)), { handleSigint: false });
    expect(first.counts.succeeded).toBe(400);
    // An array of fresh handles of the same graph finds every streamed step built: same identities.
    const again = await new StepRunner({ prefix: '/p', store, logger: quiet }).run(layered(400), { handleSigint: false });
    expect(again.counts.cached).toBe(400);
  });
});
