/**
 * Live logs of a running Slurm step (see slurm.test.ts for requirements): the job's wrapper sends
 * the step's stdout and stderr straight to the attempt's log files on the shared filesystem, the
 * files `cairn logs -f` and the progress view follow, so lines are there while the job runs.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, test } from 'vitest';
import { checkLiveLogs } from '../../../tools/testenv/grid-live-logs.js';
import { createSlurmExecutor } from '../src/index.js';
import { skipSlurm, useSlurmCluster, workerEntry } from './helpers.js';

const run = promisify(execFile);

describe.skipIf(skipSlurm)('live logs of a Slurm step', () => {
  const bed = useSlurmCluster();
  const root = bed.root;

  const running = async () => (await run('squeue', ['-h', '-t', 'RUNNING', '-o', '%A'], { env: { ...process.env, ...bed.cluster.env } })).stdout.split('\n').filter(Boolean);

  test('a step printing every 200 ms is readable line by line while squeue lists its job RUNNING', async () => {
    const seen = await checkLiveLogs({ prefix: join(root, 'single'), executor: createSlurmExecutor({ env: bed.cluster.env, workerEntry: workerEntry() }), runningJobs: running });
    console.info(`slurm live logs: print-to-read delays ${seen.lagsMs.join(', ')} ms`);
  }, 120_000);

  test('so is a step packed into an array task with another', async () => {
    const executor = createSlurmExecutor({ env: bed.cluster.env, workerEntry: workerEntry(), pack: { stepsPerTask: 2, tasksPerArray: 1, maxWaitMs: 2000 } });
    const seen = await checkLiveLogs({ prefix: join(root, 'packed'), executor, runningJobs: running, steps: 2 });
    expect(executor.stats.sbatchCalls).toBe(1);
    console.info(`slurm live logs (packed): print-to-read delays ${seen.lagsMs.join(', ')} ms`);
  }, 120_000);

  test("so is a packed command step: python3 run by its task's shell loop (alone, it runs under the same wrapper lines as any step)", async () => {
    const executor = createSlurmExecutor({ env: bed.cluster.env, nodePath: '/nonexistent/node', pack: { stepsPerTask: 2, tasksPerArray: 1, maxWaitMs: 2000 } });
    const packed = await checkLiveLogs({ prefix: join(root, 'program-packed'), executor, runningJobs: running, steps: 2, program: true });
    expect(executor.stats.sbatchCalls).toBe(1);
    console.info(`slurm live logs (packed command step): print-to-read delays ${packed.lagsMs.join(', ')} ms`);
  }, 120_000);
});
