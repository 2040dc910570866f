/**
 * Secrets on a real one-host Ray cluster. By default a step that needs a secret is refused before
 * anything is submitted (`CAIRN_SECRET_UNSAFE`, naming the step and the fix): Ray shows a job's
 * entrypoint and runtime_env to whoever reaches its dashboard. With `secrets: 'shared-file'` an
 * `apply` step and a command step get HF_TOKEN (they write its hash) while no file under the
 * store or Ray's session directory, no `ps` line and nothing the Jobs API lists holds it, and no secrets file is left behind.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apply, hasCode, lower, secret, type StepSpec } from '@cairn/core';
import { StepRunner } from '@cairn/runner';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { hashCommand } from '../../../tools/testenv/grid-secrets.js';
import { missingRay, startRay, type RayCluster } from '../../../tools/testenv/ray.js';
import { filesHolding, filesNamed, sampleCommandLines, sha256 } from '../../../tools/testenv/secret-leaks.js';
import { hashToken } from '../../../tools/testenv/secret-steps.mjs';
import { createRayExecutor } from '../src/index.js';

const missing = missingRay();
if (missing && process.env.CI) throw new Error(`Ray is required in CI: ${missing}`);
const quiet = { info() {}, warn() {}, error() {} };

describe.skipIf(missing !== undefined)('secrets on a real Ray cluster', () => {
  let cluster: RayCluster;
  const root = mkdtempSync(join(tmpdir(), 'cairn-ray-secrets-'));
  const vault = mkdtempSync(join(tmpdir(), 'cairn-vault-'));
  const file = join(vault, 'secrets.env');
  const token = `hf_${randomBytes(16).toString('hex')}`;
  beforeAll(async () => {
    writeFileSync(file, `HF_TOKEN=${token}\n`, { mode: 0o600 });
    cluster = await startRay({ workers: 0 });
  }, 150_000);
  afterAll(async () => {
    await cluster?.stop();
    rmSync(root, { recursive: true, force: true });
    rmSync(vault, { recursive: true, force: true });
  }, 90_000);

  test('by default a step that needs a secret is refused before anything is submitted, naming the step and the fix', async () => {
    const ray = createRayExecutor({ address: cluster.address, pollIntervalMs: 300 });
    const step = apply({ name: 'needs-token', version: 'v1', fn: hashToken, inputs: { token: secret('HF_TOKEN'), holdMs: 0 }, executor: 'ray' });
    const err = await new StepRunner({ prefix: join(root, 'refused'), executors: [ray], logger: quiet, secrets: { providers: [{ type: 'file', path: file }] } }).run([step]).catch((e: unknown) => e);
    expect(hasCode(err, 'CAIRN_SECRET_UNSAFE')).toBe(true);
    expect((err as Error).message).toContain('Step "needs-token" needs secret HF_TOKEN');
    expect((err as Error).message).toContain("secrets: 'shared-file'");
    expect(ray.stats.submissions).toBe(0);
  }, 60_000);

  test("with secrets: 'shared-file', apply and command steps get HF_TOKEN; no file, command line or Jobs API answer shows it", async () => {
    const ray = createRayExecutor({ address: cluster.address, pollIntervalMs: 300, secrets: 'shared-file' });
    const steps = [apply({ name: 'worker', version: 'v1', fn: hashToken, inputs: { token: secret('HF_TOKEN'), holdMs: 1500 }, executor: 'ray' }), hashCommand('cmd', 'ray')];
    const prefix = join(root, 'store');
    const printed: string[] = [];
    const logger = { info: (m: string) => printed.push(m), warn: (m: string) => printed.push(m), error: (m: string) => printed.push(m) };
    const ps = sampleCommandLines(token);
    let summary;
    try {
      summary = await new StepRunner({ prefix, executors: [ray], logger, onEvent: (e) => printed.push(JSON.stringify(e)), secrets: { providers: [{ type: 'file', path: file }] } }).run(steps);
    } finally {
      const seen = await ps.stop();
      expect(seen.hits).toEqual([]);
      expect(seen.samples).toBeGreaterThan(0);
    }
    expect(summary.counts).toEqual({ succeeded: 2 });
    for (const step of steps) {
      const out = (lower([step])[0] as StepSpec).outputPath(prefix);
      expect(readFileSync(join(out, 'hash'), 'utf8').trim(), step.name).toBe(sha256(token));
    }
    expect((summary.outcome((lower([steps[0] as never])[0] as StepSpec).outputPath(prefix))?.result as { envHasIt: boolean }).envHasIt).toBe(false);
    // The store and attempt directories, and Ray's own session directory (job logs, GCS files).
    expect(filesHolding([root, cluster.tempDir], token)).toEqual([]);
    expect(filesNamed([root], 'secrets.sh')).toEqual([]);
    // What the dashboard shows: each job's entrypoint, runtime_env and metadata.
    expect(await (await fetch(`${cluster.address}/api/jobs/`)).text()).not.toContain(token);
    expect(printed.join('\n')).not.toContain(token);
  }, 180_000);
});
