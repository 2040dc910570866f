/**
 * Preemption on a real single-node Slurm with partition-priority preemption (see slurm.test.ts
 * for requirements): a checkpointing command step in the low-tier partition is cancelled by
 * Slurm (`PREEMPTED`) when a job of the `urgent` partition needs the whole node. The runner
 * retries it from `preemptionRetries` (the step has no retries of its own) and the next attempt
 * resumes from the checkpoints the preempted one left in `$CAIRN_CHECKPOINT_DIR`. Likewise a
 * running job an operator requeues (`scontrol requeue`; the executor's `requeue: true`, since
 * Slurm refuses to requeue a job submitted with `--no-requeue`): Cairn cancels the requeued job
 * and retries the step as a preemption.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { command, lower, OUT } from '@cairn/core';
import { localLayout, StepRunner } from '@cairn/runner';
import { describe, expect, test } from 'vitest';
import { createSlurmExecutor } from '../src/index.js';
import { skipSlurm, useSlurmCluster } from './helpers.js';
import { expectResumed } from '../../../tools/testenv/resumed.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Five one-second epochs; each writes a checkpoint under a dot-name and renames it; resumes after the last one. */
const TRAIN = `set -e
ck="$CAIRN_CHECKPOINT_DIR"
done=$(ls "$ck" | grep -c '^ckpt-' || true)
echo "attempt $CAIRN_ATTEMPT starts at $done" >> "$PROGRESS"
i=$((done + 1))
while [ "$i" -le 5 ]; do
  sleep 1
  echo "epoch $i" > "$ck/.ckpt-$i.tmp" && mv "$ck/.ckpt-$i.tmp" "$ck/ckpt-$i"
  i=$((i + 1))
done
ls "$ck" > "$1/checkpoints-seen"
`;

describe.skipIf(skipSlurm)('preemption on Slurm', () => {
  const bed = useSlurmCluster({ rest: false, preemption: true, cpus: 4 });
  const root = bed.root;

  /**
   * A train step (TRAIN) on the cluster, started; resolves once it wrote its second checkpoint,
   * with the run still going, the step's output path and its progress file.
   */
  async function trainUntilCheckpoint2(tag: string, slurm: Record<string, unknown> = {}) {
    const project = join(root, `project${tag}`);
    mkdirSync(project, { recursive: true });
    writeFileSync(join(project, 'train.sh'), TRAIN);
    const progress = join(root, `progress${tag}`);
    const step = command({ name: 'train', version: 'v1', program: 'sh', args: ['train.sh', OUT], sources: ['train.sh'], dir: project, env: { PROGRESS: progress }, executor: 'slurm', resources: { cpu: 1 } });
    const prefix = join(root, `store${tag}`);
    const path = lower(step).outputPath(prefix);
    const checkpoint = (n: number) => {
      const rootDir = localLayout.checkpointRoot(path);
      return existsSync(rootDir) && readdirSync(rootDir).some((g) => existsSync(join(rootDir, g, `ckpt-${n}`)));
    };
    const runner = new StepRunner({ prefix, executors: [createSlurmExecutor({ env: bed.cluster.env, nodePath: '/nonexistent/node', ...slurm })], preemptionBackoffMs: 100 });
    const running = runner.run([step]);
    const end = Date.now() + 90_000;
    while (!checkpoint(2)) {
      if (Date.now() > end) throw new Error('the step wrote no second checkpoint in 90 s');
      await sleep(100);
    }
    return { running, path, progress, env: { ...process.env, ...bed.cluster.env } };
  }

  test('a job Slurm preempts is retried from preemptionRetries (not retries) and resumes from its checkpoints', async () => {
    const { running, path, progress, env } = await trainUntilCheckpoint2('');
    // A job of the higher tier that needs the whole node: Slurm cancels the step's job as PREEMPTED.
    execFileSync('sbatch', ['--partition=urgent', '--exclusive', '--nodes=1', `--cpus-per-task=${bed.cluster.cpus}`, `--output=${join(root, 'urgent.out')}`, '--wrap', 'sleep 2'], { env });
    await expectResumed(running, path, progress);
    expect(readFileSync(join(path, 'checkpoints-seen'), 'utf8').trim().split('\n')).toEqual(['ckpt-1', 'ckpt-2', 'ckpt-3', 'ckpt-4', 'ckpt-5']);
    // Success removed them.
    expect(existsSync(localLayout.checkpointRoot(path))).toBe(false);
  }, 180_000);

  test('a running job requeued by an operator (scontrol requeue) is retried as a preemption and resumes from its checkpoints', async () => {
    const { running, path, progress, env } = await trainUntilCheckpoint2('-requeue', { requeue: true });
    const job = execFileSync('squeue', ['-h', '-t', 'RUNNING', '-o', '%i'], { env, encoding: 'utf8' }).trim();
    // An operator (or a requeue after a node failure) puts the running job back in the queue.
    execFileSync('scontrol', ['requeue', job], { env });
    const lines = await expectResumed(running, path, progress);
    // The requeued job was cancelled, not run again beside the retry.
    expect(lines).toHaveLength(2);
    expect(execFileSync('squeue', ['-h', '-t', 'PENDING,RUNNING', '-o', '%i'], { env, encoding: 'utf8' }).trim().split('\n')).not.toContain(job);
  }, 180_000);
});
