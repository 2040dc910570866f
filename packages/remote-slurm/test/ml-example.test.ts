/**
 * examples/ml (Python programs as command steps: corpus -> tokenize -> train -> eval) end to end
 * on a real single-node Slurm (see slurm.test.ts for requirements): every step is a Slurm job
 * whose script runs python3 itself (the executor names no Node that exists), first one job per
 * step, then packed; a rerun runs nothing.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { localLayout, run } from '@cairn/runner';
import { describe, expect, test } from 'vitest';
import { createSlurmExecutor } from '../src/index.js';
import { skipSlurm, useSlurmCluster } from './helpers.js';


describe.skipIf(skipSlurm)('examples/ml on Slurm', () => {
  const bed = useSlurmCluster();
  const root = bed.root;

  for (const packed of [false, true]) {
    test(`runs end to end with ${packed ? 'packed jobs' : 'one job per step'}; a rerun runs nothing`, async () => {
      const { evaluation, model } = await import('../../../examples/ml/pipeline.js');
      const prefix = join(root, packed ? 'packed' : 'single');
      const slurm = () => createSlurmExecutor({ env: bed.cluster.env, nodePath: '/nonexistent/node', ...(packed ? { pack: { maxWaitMs: 200 } } : {}) });
      const first = slurm();
      const ran: string[] = [];
      const onEvent = (e: { type: string; state?: string; step?: string }) => void (e.type === 'step' && e.state === 'running' && ran.push(e.step as string));
      const [evaluated, trained] = await run(evaluation, model, { prefix, executors: [first], defaultExecutor: first.name, onEvent });
      expect(new Set(ran)).toEqual(new Set(['corpus', 'tokenize', 'train', 'eval']));
      expect(first.counters.submissions).toBe(4); // a chain: each step is alone in its batch
      const result = evaluated.value as { perplexity: number; pairs: number };
      expect(result.pairs).toBeGreaterThan(0);
      expect(result.perplexity).toBeGreaterThan(1);
      expect(result.perplexity).toBeLessThan(24);
      expect(trained.value).toEqual({ epochs: 3, resumedFrom: 0 });
      // Its checkpoints went to the step's checkpoint directory ($CAIRN_CHECKPOINT_DIR), not into
      // its output (train.py's fallback without one), and the SUCCESS commit removed them.
      expect(readdirSync(trained.path)).not.toContain('checkpoints');
      expect(existsSync(localLayout.checkpointRoot(trained.path))).toBe(false);
      const second = slurm();
      ran.length = 0;
      await run(evaluation, { prefix, executors: [second], defaultExecutor: second.name, onEvent });
      expect(ran).toEqual([]);
      expect(second.counters.submissions).toBe(0);
    }, 120_000);
  }
});
