/**
 * The live view's ETA while a step runs longer than the finished ones: after a 1 s step, a 6 s
 * step showed "eta 1.0s" for its whole run (the average of finished steps, times the steps left,
 * never looking at how long the running one had been at it).
 */
import pc from 'picocolors';
import { expect, it } from 'vitest';
import type { RunnerEvent } from '@cairn/runner';
import { Progress } from '../src/ui/progress.js';

const event = (step: string, state: string, time: number) => ({ type: 'step', runId: 'r', step, path: `/s/${step}/v1`, state, time, attempt: 1 }) as unknown as RunnerEvent;

/** The ETA of the last block drawn, in seconds. */
function lastEta(tty: string): number {
  const all = [...tty.matchAll(/eta ([0-9.]+)(ms|s)/g)];
  const m = all.at(-1);
  if (m === undefined) throw new Error(`no eta drawn:\n${tty}`);
  return m[2] === 'ms' ? Number(m[1]) / 1000 : Number(m[1]);
}

it('grows while a step runs past the finished steps\' average instead of standing at it', async () => {
  let tty = '';
  const p = new Progress({ mode: 'tty', write: (s) => (tty += s), colors: pc.createColors(false), columns: () => 160 });
  const now = Date.now();
  p.onEvent(event('prep', 'running', now - 7000));
  p.onEvent(event('prep', 'succeeded', now - 6000)); // took 1 s
  p.onEvent(event('train', 'running', now - 6000)); // running for 6 s now
  await new Promise((r) => setTimeout(r, 300));
  p.finish();
  expect(tty).not.toContain('eta 1.0s');
  expect(lastEta(tty)).toBeGreaterThanOrEqual(2);
});

it('counts down while a step runs within the average', async () => {
  let tty = '';
  const p = new Progress({ mode: 'tty', write: (s) => (tty += s), colors: pc.createColors(false), columns: () => 160 });
  const now = Date.now();
  p.onEvent(event('a', 'running', now - 20_000));
  p.onEvent(event('a', 'succeeded', now - 10_000)); // took 10 s
  p.onEvent(event('b', 'running', now - 4000)); // 4 s of an expected 10
  await new Promise((r) => setTimeout(r, 300));
  p.finish();
  const eta = lastEta(tty);
  expect(eta).toBeGreaterThan(4);
  expect(eta).toBeLessThan(7);
});
