/**
 * Live logs of a running Grid Engine step (see sge.test.ts for requirements): the job's wrapper
 * sends the step's stdout and stderr straight to the attempt's log files on the shared
 * filesystem, the files `cairn logs -f` and the progress view follow, so lines are there while
 * the job runs.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, test } from 'vitest';
import { checkLiveLogs } from '../../../tools/testenv/grid-live-logs.js';
import { workerEntry } from '../../../tools/testenv/grid-jobs.js';
import { createSgeExecutor } from '../src/index.js';
import { skipSge, useSgeCell } from './helpers.js';

const run = promisify(execFile);

describe.skipIf(skipSge)('live logs of a Grid Engine step', () => {
  const bed = useSgeCell({ slots: 2 }, 'cairn-sge-live-logs-');
  const root = bed.root;

  const running = async () => {
    const xml = (await run('qstat', ['-s', 'r', '-xml'], { env: { ...process.env, ...bed.cell.env } })).stdout;
    return [...xml.matchAll(/<JB_job_number>(\d+)</g)].map((m) => m[1] as string);
  };

  test('a step printing every 200 ms is readable line by line while qstat lists its job running', async () => {
    const seen = await checkLiveLogs({ prefix: join(root, 'store'), executor: createSgeExecutor({ env: bed.cell.env, workerEntry: workerEntry() }), runningJobs: running });
    console.info(`sge live logs: print-to-read delays ${seen.lagsMs.join(', ')} ms`);
  }, 180_000);

  test("so is a packed command step: python3 run by its task's shell loop (alone, it runs under the same wrapper lines as any step)", async () => {
    const executor = createSgeExecutor({ env: bed.cell.env, nodePath: '/nonexistent/node', pack: { stepsPerTask: 2, tasksPerArray: 1, maxWaitMs: 2000 } });
    const packed = await checkLiveLogs({ prefix: join(root, 'program-packed'), executor, runningJobs: running, steps: 2, program: true });
    expect(executor.counters.submissions).toBe(1);
    console.info(`sge live logs (packed command step): print-to-read delays ${packed.lagsMs.join(', ')} ms`);
  }, 180_000);
});
