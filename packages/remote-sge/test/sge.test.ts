/**
 * The Grid Engine executor against a REAL one-host Son of Grid Engine cell (tools/testenv/sge.ts).
 * Needs gridengine-master, -exec and -client (tools/testenv/install-system.sh) and the built
 * runner and grid packages. Without Grid Engine the suite is skipped locally and fails in CI.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { command, hasCode, lower, OUT } from '@cairn/core';
import { localLayout, StepRunner } from '@cairn/runner';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { jobFor, RecordingHost, tempRoot, workerEntry } from '../../../tools/testenv/grid-jobs.js';
import { sgeOps } from '../../../tools/testenv/grid-clusters.js';
import { describeExecutor } from '../../../tools/testenv/grid-suites.js';
import { missingSgeBinaries, startSge, type SgeCell } from '../../../tools/testenv/sge.js';
import { expectResumed } from '../../../tools/testenv/resumed.js';
import { createSgeExecutor, type SgeExecutor, type SgeExecutorOptions } from '../src/index.js';

const missing = missingSgeBinaries();
const skip = missing.length > 0 && !process.env.CI;
if (skip) console.warn(`@cairn/remote-sge: skipping the Grid Engine tests: ${missing.join(', ')} not installed (run tools/testenv/install-system.sh).`);

let cell: SgeCell;
const executors: SgeExecutor[] = [];
const root = tempRoot('cairn-sge-test-');

async function started(extra: Partial<SgeExecutorOptions> = {}): Promise<{ ex: SgeExecutor; host: RecordingHost }> {
  const ex = createSgeExecutor({ env: cell.env, workerEntry: workerEntry(), exitFileGraceMs: 2000, ...extra });
  executors.push(ex);
  const host = new RecordingHost(join(root, 'store'));
  await ex.start(host);
  return { ex, host };
}

describe.skipIf(skip)('Grid Engine executor on a real one-host cell', () => {
  beforeAll(async () => {
    cell = await startSge({ slots: 8 });
  });
  afterAll(async () => {
    for (const ex of executors) await ex.stop();
    await cell?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  // What every grid scheduler must do with one job per step (tools/testenv/grid-suites.ts).
  describeExecutor('one job per step', {
    started,
    root: () => root,
    cluster: () => sgeOps(cell.env),
    queued: { hints: { queue: 'held.q' } }, // a queue with no slots (tools/testenv/sge.ts)
    // h_vmem limits address space: Node needs about 0.75 GB of it to start (below, V8 cannot reserve its code range).
    requested: { cpu: 1, memoryGb: 1, timeLimit: 300 },
    // The wrapper's own watchdog sends USR2 5 s in (Grid Engine sends no warning itself).
    warning: { timeLimit: 20, graceSeconds: 15, timeoutMs: 40_000 },
  });

  test('Grid Engine kills a job at its h_rt: TIMEOUT (from qacct)', async () => {
    const { ex, host } = await started({ walltimeGraceSeconds: 0 });
    const job = jobFor(root, 'sleepy', { resources: { timeLimit: 4 } });
    const s = await host.final((await ex.submit(job)).jobId, 40_000);
    expect(s).toMatchObject({ state: 'failed', reason: 'TIMEOUT' });
    expect(hasCode(s.error, 'CAIRN_TIMEOUT')).toBe(true);
    expect(existsSync(join(job.attemptDir, 'exitcode'))).toBe(false); // SIGKILL: only accounting knows
    expect(ex.stats.qacctCalls).toBeGreaterThan(0);
  });

  test('qsub missing → CAIRN_REMOTE naming the command', async () => {
    const { ex } = await started({ env: { ...cell.env, PATH: join(root, 'no-bin') } });
    const err = await ex.submit(jobFor(root, 'ok')).catch((e: unknown) => e);
    expect(hasCode(err, 'CAIRN_REMOTE')).toBe(true);
    expect((err as Error).message).toMatch(/`qsub -terse .*` exited with 127.*not found/s);
  });

  test('an unreachable qmaster → CAIRN_REMOTE with the command and a hint', async () => {
    const { ex } = await started({ env: { ...cell.env, SGE_QMASTER_PORT: '9' } });
    const err = await ex.submit(jobFor(root, 'ok')).catch((e: unknown) => e);
    expect(hasCode(err, 'CAIRN_REMOTE')).toBe(true);
    expect((err as Error).message).toMatch(/qsub .* exited with \d+: .*qmaster/is);
  }, 60_000);

  test('a running job rescheduled (qmod -rj) is retried as a preemption and resumes from its checkpoints', async () => {
    const project = join(root, 'project-reschedule');
    mkdirSync(project, { recursive: true });
    // Five one-second epochs; each checkpoint written under a dot-name and renamed; resumes after the last one.
    writeFileSync(join(project, 'train.sh'), 'ck="$CAIRN_CHECKPOINT_DIR"\ndone=$(ls "$ck" | grep -c \'^ckpt-\' || true)\necho "attempt $CAIRN_ATTEMPT starts at $done" >> "$PROGRESS"\ni=$((done + 1))\nwhile [ "$i" -le 5 ]; do\n  sleep 1\n  echo "epoch $i" > "$ck/.ckpt-$i.tmp" && mv "$ck/.ckpt-$i.tmp" "$ck/ckpt-$i"\n  i=$((i + 1))\ndone\n');
    const progress = join(root, 'progress-reschedule');
    const step = command({ name: 'train', version: 'v1', program: 'sh', args: ['train.sh', OUT], sources: ['train.sh'], dir: project, env: { PROGRESS: progress }, executor: 'sge' });
    const prefix = join(root, 'store-reschedule');
    const path = lower(step).outputPath(prefix);
    const checkpoint = (n: number) => {
      const rootDir = localLayout.checkpointRoot(path);
      return existsSync(rootDir) && readdirSync(rootDir).some((g) => existsSync(join(rootDir, g, `ckpt-${n}`)));
    };
    // Grid Engine reschedules only rerunnable jobs (qsub -r y); Cairn submits -r n unless told.
    const ex = createSgeExecutor({ env: cell.env, rerunnable: true, nodePath: '/nonexistent/node' });
    executors.push(ex);
    const runner = new StepRunner({ prefix, executors: [ex], preemptionBackoffMs: 100 });
    const running = runner.run([step]);
    const end = Date.now() + 90_000;
    while (!checkpoint(2)) {
      if (Date.now() > end) throw new Error('the step wrote no second checkpoint in 90 s');
      await new Promise((r) => setTimeout(r, 100));
    }
    const env = { ...process.env, ...cell.env };
    const job = (/^\s*(\d+)\s/m.exec(execFileSync('qstat', ['-s', 'r'], { env, encoding: 'utf8' })) as RegExpExecArray)[1] as string;
    execFileSync('qmod', ['-rj', job], { env });
    const lines = await expectResumed(running, path, progress);
    // The rescheduled job was deleted, not run again beside the retry.
    expect(lines).toHaveLength(2);
  }, 180_000);

  test('more than one CPU without a parallel environment → CAIRN_CONFIG before anything is submitted', async () => {
    const { ex } = await started();
    const err = await ex.submit(jobFor(root, 'ok', { resources: { cpu: 4 } })).catch((e: unknown) => e);
    expect(hasCode(err, 'CAIRN_CONFIG')).toBe(true);
    expect((err as Error).message).toMatch(/parallelEnvironment/);
    expect(ex.stats.qsubCalls).toBe(0);
  });
});
