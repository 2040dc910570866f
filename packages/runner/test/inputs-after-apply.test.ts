/**
 * Issue 28: an `inputs` object changed after `apply()` (a handle added to it) made a hidden
 * dependency — a cycle `lower()` never saw — and the step failed at run time with "no output path
 * for dependency #-1". apply() now keeps a snapshot, so the run is the one the handles describe.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { apply } from '@cairn/core';
import { StepRunner } from '../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'cairn-inputs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('a handle added to a step\'s inputs object after apply() neither runs nor breaks the step', async () => {
  const shared: Record<string, unknown> = { n: 2 };
  const a = apply({ name: 'a', version: 'v1', fn: (i: { n: number }) => i.n * 10, inputs: shared as { n: number } });
  const b = apply({ name: 'b', version: 'v1', fn: (i: { a: string }) => `after ${i.a}`, inputs: { a } });
  shared.b = b; // a → b → a, after the fact
  shared.n = 5;
  const runner = new StepRunner({ prefix: dir, logger: { info: () => undefined, warn: () => undefined, error: () => undefined } });
  await runner.run([b]);
  const [la, lb] = await runner.load([a, b]);
  // The snapshot's n (2, not 5); b received a's output path.
  expect(la.value).toBe(20);
  expect(lb.value).toBe(`after ${la.path}`);
});
