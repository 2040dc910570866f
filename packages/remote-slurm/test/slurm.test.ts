/**
 * The Slurm executor against a REAL single-node Slurm (tools/testenv/slurm.ts), through both
 * transports. Needs Slurm installed (tools/testenv/install-slurm.sh) and the runner's worker
 * entry built (npx tsup in packages/runner). Without Slurm binaries the suite is skipped
 * locally and fails in CI.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { hasCode } from '@cairn/core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { slurmOps } from '../../../tools/testenv/grid-clusters.js';
import { describeExecutor } from '../../../tools/testenv/grid-suites.js';
import { missingSlurmBinaries, startSlurm, type SlurmCluster } from '../../../tools/testenv/slurm.js';
import { createSlurmExecutor, type SlurmExecutor, type SlurmExecutorOptions } from '../src/index.js';
import type { JobStatus } from '../src/runner-api.js';
import { jobFor, RecordingHost, tempRoot, workerEntry } from './helpers.js';

const run = promisify(execFile);
const missing = missingSlurmBinaries();
const skip = missing.length > 0 && !process.env.CI;
if (skip) console.warn(`@cairn/remote-slurm: skipping the Slurm tests: ${missing.join(', ')} not installed (run tools/testenv/install-slurm.sh).`);

let cluster: SlurmCluster;
const executors: SlurmExecutor[] = [];
const root = tempRoot();

function executor(transport: 'cli' | 'rest', extra: Partial<SlurmExecutorOptions> = {}): SlurmExecutor {
  const ex = createSlurmExecutor({
    transport,
    env: cluster.env,
    rest: { url: cluster.restUrl, user: cluster.restUser, token: cluster.restToken },
    workerEntry: workerEntry(),
    exitFileGraceMs: 2000,
    ...extra,
  });
  executors.push(ex);
  return ex;
}

async function started(transport: 'cli' | 'rest', extra: Partial<SlurmExecutorOptions> = {}): Promise<{ ex: SlurmExecutor; host: RecordingHost }> {
  const ex = executor(transport, extra);
  const host = new RecordingHost(join(root, 'store'));
  await ex.start(host);
  return { ex, host };
}

const statusCalls = (ex: SlurmExecutor) => (ex.transport === 'cli' ? ex.stats.squeueCalls : ex.stats.restCalls);

// A job that outlives `--time=1` with no walltime warning, so Slurm itself kills it (TIMEOUT).
// Slurm checks limits every 30 s: this takes 60–95 s, so it is submitted first and checked last.
let slurmTimeout: Promise<JobStatus> | undefined;

describe.skipIf(skip)('Slurm executor on a real single-node Slurm', () => {
  beforeAll(async () => {
    cluster = await startSlurm();
    if (!existsSync(workerEntry())) throw new Error(`${workerEntry()} is missing: build @cairn/runner first (npx tsup in packages/runner).`);
    const { ex, host } = await started('cli', { walltimeGraceSeconds: 0 });
    const h = await ex.submit(jobFor(root, 'sleepy', { resources: { timeLimit: 60 } }));
    slurmTimeout = host.final(h.jobId, 120_000);
    slurmTimeout.catch(() => undefined);
  });

  afterAll(async () => {
    for (const ex of executors) await ex.stop();
    await cluster?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  // What every grid scheduler must do with one job per step (tools/testenv/grid-suites.ts), through both transports.
  for (const transport of ['cli', 'rest'] as const) {
    describeExecutor(
      `${transport} transport`,
      {
        started: (extra) => started(transport, extra),
        root: () => root,
        cluster: () => slurmOps(cluster.env),
        queued: { cpu: 16 }, // the whole node: queued while another job runs
        requested: { cpu: 1, memoryGb: 0.5, timeLimit: 300 },
        // timeLimit 60 s with a 50 s warning: USR2 arrives 10–30 s in (Slurm's signal or the wrapper's watchdog).
        warning: { timeLimit: 60, graceSeconds: 50, timeoutMs: 45_000 },
      },
      true,
    );
  }

  describe.each(['cli', 'rest'] as const)('%s transport, 200 tiny steps', (transport) => {
    test('all complete with one batched status check per interval', async () => {
      const { ex, host } = await started(transport);
      const handles = await Promise.all(Array.from({ length: 200 }, () => ex.submit(jobFor(root, 'tiny'))));
      const statuses = await Promise.all(handles.map((h) => host.final(h.jobId, 120_000)));
      expect(statuses.every((s) => s.state === 'succeeded')).toBe(true);
      // One squeue (or one GET /jobs) covers every active job: far fewer checks than jobs.
      const calls = statusCalls(ex) - (transport === 'rest' ? 200 : 0); // REST submits are requests too
      console.info(`${transport}: 200 jobs, ${calls} status checks`);
      expect(calls).toBeLessThan(200);
      expect(new Set(handles.map((h) => h.info.slurmJobId)).size).toBe(200);
      expect(ex.stats.sbatchCalls).toBe(transport === 'cli' ? 200 : 0);
    }, 150_000);
  });

  test('slurmrestd: packed steps go as one array (job.array), tasks are watched and cancelled one by one', async () => {
    const { ex, host } = await started('rest', { pack: { stepsPerTask: 2, maxWaitMs: 100 } });
    const handles = await Promise.all(['tiny', 'exit3', 'sleepy', 'sleepy'].map((n) => ex.submit(jobFor(root, n))));
    expect(ex.counters.submissions).toBe(1);
    expect(handles.map((h) => String(h.info.slurmJobId).replace(/^\d+/, ''))).toEqual(['_1', '_1', '_2', '_2']);
    expect(await host.final(handles[0]!.jobId)).toMatchObject({ state: 'succeeded' });
    expect(await host.final(handles[1]!.jobId)).toMatchObject({ state: 'failed', exitCode: 3 });
    await host.running(handles[2]!.jobId);
    await ex.cancel([handles[2]!, handles[3]!]); // every step of task 2: the task itself goes (DELETE …/job/<id>_2)
    for (const h of handles.slice(2)) expect(await host.final(h.jobId)).toMatchObject({ state: 'cancelled' });
  }, 60_000);

  test('sbatch missing → CAIRN_REMOTE naming the command', async () => {
    const { ex } = await started('cli', { env: { ...cluster.env, PATH: join(root, 'no-bin') } });
    const err = await ex.submit(jobFor(root, 'ok')).catch((e: unknown) => e);
    expect(hasCode(err, 'CAIRN_REMOTE')).toBe(true);
    expect((err as Error).message).toMatch(/`sbatch --parsable .*` exited with 127.*not found/s);
  });

  test('an unreachable controller → CAIRN_REMOTE with the command and its stderr', async () => {
    const conf = join(root, 'unreachable.conf');
    const text = readFileSync(cluster.confPath, 'utf8').replace(/^SlurmctldPort=\d+$/m, 'SlurmctldPort=9');
    writeFileSync(conf, text);
    const { ex } = await started('cli', { env: { SLURM_CONF: conf } });
    const err = await ex.submit(jobFor(root, 'ok')).catch((e: unknown) => e);
    expect(hasCode(err, 'CAIRN_REMOTE')).toBe(true);
    expect((err as Error).message).toMatch(/sbatch .* exited with \d+: .*controller/is);
  });

  test('an unreachable slurmrestd → CAIRN_REMOTE', async () => {
    const { ex } = await started('rest', { rest: { url: 'http://127.0.0.1:9', user: 'root', token: 'x' } });
    const err = await ex.submit(jobFor(root, 'ok')).catch((e: unknown) => e);
    expect(hasCode(err, 'CAIRN_REMOTE')).toBe(true);
    expect((err as Error).message).toContain('POST http://127.0.0.1:9/slurm/v0.0.38/job/submit');
  });

  test('Slurm kills a job over its --time: TIMEOUT (slow: 60–95 s, started in beforeAll)', async () => {
    const s = await (slurmTimeout as Promise<JobStatus>);
    expect(s).toMatchObject({ state: 'failed', reason: 'TIMEOUT' });
    expect(hasCode(s.error, 'CAIRN_TIMEOUT')).toBe(true);
  }, 120_000);
});
