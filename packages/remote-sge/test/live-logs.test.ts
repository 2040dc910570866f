/**
 * Live logs of a running Grid Engine step (see sge.test.ts for requirements): the job's wrapper
 * sends the step's stdout and stderr straight to the attempt's log files on the shared
 * filesystem, the files `cairn logs -f` and the progress view follow, so lines are there while
 * the job runs.
 */
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { checkLiveLogs } from '../../../tools/testenv/grid-live-logs.js';
import { tempRoot, workerEntry } from '../../../tools/testenv/grid-jobs.js';
import { missingSgeBinaries, startSge, type SgeCell } from '../../../tools/testenv/sge.js';
import { createSgeExecutor } from '../src/index.js';

const run = promisify(execFile);
const skip = missingSgeBinaries().length > 0 && !process.env.CI;

describe.skipIf(skip)('live logs of a Grid Engine step', () => {
  let cell: SgeCell;
  const root = tempRoot('cairn-sge-live-logs-');
  beforeAll(async () => {
    cell = await startSge({ slots: 2 });
  });
  afterAll(async () => {
    await cell?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  const running = async () => {
    const xml = (await run('qstat', ['-s', 'r', '-xml'], { env: { ...process.env, ...cell.env } })).stdout;
    return [...xml.matchAll(/<JB_job_number>(\d+)</g)].map((m) => m[1] as string);
  };

  test('a step printing every 200 ms is readable line by line while qstat lists its job running', async () => {
    const seen = await checkLiveLogs({ prefix: join(root, 'store'), executor: createSgeExecutor({ env: cell.env, workerEntry: workerEntry() }), runningJobs: running });
    console.info(`sge live logs: print-to-read delays ${seen.lagsMs.join(', ')} ms`);
  }, 180_000);

  test("so is a packed command step: python3 run by its task's shell loop (alone, it runs under the same wrapper lines as any step)", async () => {
    const executor = createSgeExecutor({ env: cell.env, nodePath: '/nonexistent/node', pack: { stepsPerTask: 2, tasksPerArray: 1, maxWaitMs: 2000 } });
    const packed = await checkLiveLogs({ prefix: join(root, 'program-packed'), executor, runningJobs: running, steps: 2, program: true });
    expect(executor.counters.submissions).toBe(1);
    console.info(`sge live logs (packed command step): print-to-read delays ${packed.lagsMs.join(', ')} ms`);
  }, 180_000);
});
