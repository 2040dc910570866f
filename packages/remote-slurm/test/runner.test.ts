/**
 * End to end: a StepRunner pipeline with a local step and Slurm steps on a real single-node
 * Slurm (see slurm.test.ts for requirements).
 */
import { readFileSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { StepSpec } from '@cairn/core';
import { StepRunner } from '@cairn/runner';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { missingSlurmBinaries, startSlurm, type SlurmCluster } from '../../../tools/testenv/slurm.js';
import { createSlurmExecutor, type SlurmExecutor } from '../src/index.js';
import { STEPS, tempRoot, workerEntry } from './helpers.js';

const missing = missingSlurmBinaries();
const skip = missing.length > 0 && !process.env.CI;

let cluster: SlurmCluster;
const root = tempRoot();

function pipeline(): StepSpec {
  const prep = new StepSpec({
    name: 'prep',
    executor: 'inline',
    hashAttrs: { rows: 3 },
    fn: async (out: string) => {
      await writeFile(join(out, 'data.txt'), `prep@${process.pid}\n`);
    },
  });
  const left = new StepSpec({ name: 'left', deps: [prep], executor: 'slurm', ref: { module: STEPS, export: 'concat' }, resources: { cpu: 1, timeLimit: 120 } });
  const right = new StepSpec({ name: 'right', deps: [prep], executor: 'slurm', ref: { module: STEPS, export: 'concat' }, resources: { cpu: 1 } });
  return new StepSpec({ name: 'join', deps: [left, right], executor: 'slurm', ref: { module: STEPS, export: 'concat' } });
}

describe.skipIf(skip)('StepRunner with the Slurm executor', () => {
  beforeAll(async () => {
    cluster = await startSlurm({ rest: false });
  });
  afterAll(async () => {
    await cluster?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  test('a pipeline of local and Slurm steps runs, then reruns fully cached', async () => {
    const prefix = join(root, 'store');
    const slurm = (): SlurmExecutor => createSlurmExecutor({ env: cluster.env, workerEntry: workerEntry() });
    const first = slurm();
    const target = pipeline();
    const summary = await new StepRunner({ prefix, executors: [first] }).run([target]);
    expect('counts' in summary && summary.counts).toEqual({ succeeded: 4 });
    const text = readFileSync(join(target.outputPath(prefix), 'data.txt'), 'utf8');
    expect(text).toMatch(new RegExp(`^prep@${process.pid}>left@\\d+\\+prep@${process.pid}>right@\\d+>join@\\d+\\n$`));
    expect(first.stats.sbatchCalls).toBe(3);

    const second = slurm();
    const again = await new StepRunner({ prefix, executors: [second] }).run([pipeline()]);
    // Only the built terminal is examined on a cached rerun.
    expect('counts' in again && again.counts).toEqual({ cached: 1 });
    expect(second.stats.sbatchCalls).toBe(0);
  }, 60_000);
});
