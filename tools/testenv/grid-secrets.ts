/**
 * Secrets on a REAL grid scheduler (Slurm, Grid Engine): an `apply` step and a command step that
 * need `secret('HF_TOKEN')`, each as its own job and packed, get the value (they write its hash)
 * while no file under the store, the job and pack directories (scripts, tasks, logs, the
 * scheduler's output) holds it, `ps` never shows it, and no secrets file is left behind; with the
 * `env` provider the runner's own variable is not copied into the job by `--export=ALL` / `-V`. A secret
 * no provider resolves fails the run before anything is submitted, naming the step and the secret.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apply, command, hasCode, lower, secret, type StepSpec } from '@cairn/core';
import type { GridExecutor, GridExecutorOptions } from '@cairn/grid';
import { StepRunner } from '@cairn/runner';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { GridTestCluster } from './grid-clusters.js';
import { tempRoot, workerEntry } from './grid-jobs.js';
import { filesHolding, filesNamed, sampleCommandLines, sha256 } from './secret-leaks.js';
import { hashToken } from './secret-steps.mjs';

/** Makes the scheduler's executor for a cluster. */
export type SecretsExecutorFactory = (cluster: GridTestCluster, options: GridExecutorOptions) => GridExecutor;

/** A command step that holds HF_TOKEN for a moment, then writes its hash (the program never gets it as an argument). */
export function hashCommand(name: string, executor: string): ReturnType<typeof command> {
  return command({
    name,
    version: 'v1',
    executor,
    program: 'sh',
    args: ['-c', 'sleep 1.5; printf %s "$HF_TOKEN" | sha256sum | cut -c1-64 > "$CAIRN_OUTPUT/hash"'],
    env: { HF_TOKEN: secret('HF_TOKEN') },
  });
}

/** The test suite, for one scheduler. */
export function describeSecrets(label: string, start: () => Promise<GridTestCluster>, create: SecretsExecutorFactory): void {
  describe(`${label}: secrets`, () => {
    let cluster: GridTestCluster | undefined;
    const root = tempRoot('cairn-grid-secrets-');
    // The provider's file lives outside everything the test searches.
    const vault = mkdtempSync(join(tmpdir(), 'cairn-vault-'));
    const executors: GridExecutor[] = [];
    const make = (options: GridExecutorOptions): GridExecutor => {
      const ex = create(cluster as GridTestCluster, { workerEntry: workerEntry(), exitFileGraceMs: 2000, ...options });
      executors.push(ex);
      return ex;
    };
    beforeAll(async () => {
      cluster = await start();
    });
    afterAll(async () => {
      for (const ex of executors) await ex.stop();
      await cluster?.stop();
      rmSync(root, { recursive: true, force: true });
      rmSync(vault, { recursive: true, force: true });
    });

    test('apply and command steps, alone and packed, get HF_TOKEN; no file, script, log or command line shows it', async () => {
      const token = `hf_${randomBytes(16).toString('hex')}`;
      const file = join(vault, 'secrets.env');
      writeFileSync(file, `HF_TOKEN=${token}\n`, { mode: 0o600 });
      const single = make({ name: `${label}-single` });
      const packed = make({ name: `${label}-packed`, pack: { maxWaitMs: 300, stepsPerTask: 2 } });
      const worker = (name: string, executor: string, n: number) => apply({ name, version: 'v1', fn: hashToken, inputs: { token: secret('HF_TOKEN'), holdMs: 1500 + n }, executor, resources: { cpu: 1 } });
      const steps = [
        worker('alone', single.name, 0),
        hashCommand('cmd-alone', single.name),
        worker('packed-a', packed.name, 1),
        worker('packed-b', packed.name, 2),
        hashCommand('cmd-packed-a', packed.name),
        hashCommand('cmd-packed-b', packed.name),
      ];
      const prefix = join(root, 'store');
      const printed: string[] = [];
      const logger = { info: (m: string) => printed.push(m), warn: (m: string) => printed.push(m), error: (m: string) => printed.push(m) };
      const ps = sampleCommandLines(token);
      const runner = new StepRunner({ prefix, executors: [single, packed], secrets: { providers: [{ type: 'file', path: file }] }, logger, onEvent: (e) => printed.push(JSON.stringify(e)) });
      let summary;
      try {
        summary = await runner.run(steps);
      } finally {
        const seen = await ps.stop();
        expect(seen.hits).toEqual([]);
        expect(seen.samples).toBeGreaterThan(0);
      }
      expect(summary.counts).toEqual({ succeeded: 6 });
      // Packed: the two worker steps shared a job, as did the two command steps.
      expect(packed.counters.steps).toBe(4);
      expect(packed.counters.submissions).toBeLessThan(4);
      for (const s of steps) {
        const out = (lower([s])[0] as StepSpec).outputPath(prefix);
        expect(readFileSync(join(out, 'hash'), 'utf8').trim(), s.name).toBe(sha256(token));
      }
      // A worker step's secrets were taken out of its environment before it ran.
      for (const s of steps.slice(0, 4).filter((_, i) => i !== 1)) expect((summary.outcome((lower([s])[0] as StepSpec).outputPath(prefix))?.result as { envHasIt: boolean }).envHasIt).toBe(false);
      expect(filesHolding([root], token)).toEqual([]);
      expect(filesNamed([root], 'secrets.sh')).toEqual([]);
      expect(printed.join('\n')).not.toContain(token);
    }, 240_000);

    test("with the env provider, the runner's variable that holds the value is not copied into the job (sbatch --export=ALL, qsub -V)", async () => {
      const token = `hf_${randomBytes(16).toString('hex')}`;
      process.env.CAIRN_TEST_HF_TOKEN = token;
      try {
        const ex = make({ name: `${label}-env`, pack: { maxWaitMs: 300 } });
        const steps = [0, 1].map((n) => apply({ name: `from-env-${n}`, version: 'v1', fn: hashToken, inputs: { token: secret('HF_TOKEN'), holdMs: n }, executor: ex.name }));
        const prefix = join(root, 'env-provider');
        const summary = await new StepRunner({ prefix, executors: [ex], logger: { info() {}, warn() {}, error() {} }, secrets: { providers: [{ type: 'env', prefix: 'CAIRN_TEST_' }] } }).run(steps);
        expect(summary.counts).toEqual({ succeeded: 2 });
        for (const s of steps) expect(summary.outcome((lower([s])[0] as StepSpec).outputPath(prefix))?.result).toEqual({ hash: sha256(token), envHasIt: false });
        expect(filesHolding([root], token)).toEqual([]);
      } finally {
        delete process.env.CAIRN_TEST_HF_TOKEN;
      }
    }, 180_000);

    test('a secret no provider resolves fails the run before anything is submitted, naming step and secret', async () => {
      const ex = make({ name: `${label}-missing` });
      const step = apply({ name: 'needs-missing', version: 'v1', fn: hashToken, inputs: { token: secret('CAIRN_TEST_NO_SUCH_TOKEN'), holdMs: 0 }, executor: ex.name });
      const err = await new StepRunner({ prefix: join(root, 'missing'), executors: [ex], secrets: { providers: [{ type: 'env' }] } }).run([step]).catch((e: unknown) => e);
      expect(hasCode(err, 'CAIRN_SECRET_UNRESOLVED')).toBe(true);
      expect((err as Error).message).toContain('Step "needs-missing" needs secret CAIRN_TEST_NO_SUCH_TOKEN');
      expect(ex.counters.submissions).toBe(0);
    }, 120_000);
  });
}
