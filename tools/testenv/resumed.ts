/**
 * The check shared by the grid schedulers' preemption tests: a training step that was preempted
 * once and ran again resumed from its checkpoints.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ArtifactRecord } from '@cairn/runner';
import { expect } from 'vitest';

/**
 * The run ended with one preempted attempt, then one that resumed from at least checkpoint 2 (the
 * two seen before the preemption); returns the lines of the program's progress file.
 */
export async function expectResumed(running: Promise<unknown>, path: string, progress: string): Promise<string[]> {
  const summary = (await running) as object;
  expect('counts' in summary && summary.counts).toEqual({ succeeded: 1 });
  const record = JSON.parse(readFileSync(join(path, '.artifact.json'), 'utf8')) as ArtifactRecord & { attempts: { state: string }[] };
  expect(record.attempts.map((a) => a.state)).toEqual(['preempted', 'succeeded']);
  const lines = readFileSync(progress, 'utf8').trim().split('\n');
  expect(lines[0]).toBe('attempt 1 starts at 0');
  expect(Number(/^attempt 2 starts at (\d+)$/.exec(lines[1] ?? '')?.[1])).toBeGreaterThanOrEqual(2);
  return lines;
}
