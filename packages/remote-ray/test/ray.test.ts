/**
 * The Ray executor against a real one-host Ray cluster (tools/testenv/ray.ts: a head and a worker
 * node advertising 2 GPUs, started from the pinned Ray in .venv-ray). Skipped locally without
 * the venv (run tools/testenv/install-ray.sh); in CI (CI=true) a missing Ray fails.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { localLayout, StepRunner, type ArtifactRecord } from '@cairn/runner';
import { apply } from '@cairn/core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { missingRay, startRay, type RayCluster } from '../../../tools/testenv/ray.js';
import { startRunnerUntilJob } from '../../../tools/testenv/runner-child.js';
import { createRayExecutor, type RayExecutor } from '../src/index.js';
import { exit3, gpuEnv, napStep, pipeline, sleepy } from './fixtures/steps.mjs';

const missing = missingRay();
if (missing && process.env.CI) throw new Error(`Ray is required in CI: ${missing}`);
const quiet = { info() {}, warn() {}, error() {} };

let cluster: RayCluster;
const root = mkdtempSync(join(tmpdir(), 'cairn-ray-test-'));

const ray = (extra: Parameters<typeof createRayExecutor>[0] = {}): RayExecutor => createRayExecutor({ address: cluster.address, pollIntervalMs: 300, ...extra });

/** Every job the cluster knows (the Jobs API's list). */
async function listJobs(): Promise<{ submission_id: string; status: string; metadata?: Record<string, string> | null }[]> {
  const res = await fetch(`${cluster.address}/api/jobs/`);
  return (await res.json()) as { submission_id: string; status: string }[];
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe.skipIf(missing !== undefined)('the Ray executor on a real Ray cluster', () => {
  beforeAll(async () => {
    cluster = await startRay({ workers: 1, workerGpus: 2 });
  }, 150_000);
  afterAll(async () => {
    await cluster?.stop();
    rmSync(root, { recursive: true, force: true });
  }, 90_000);

  test('a pipeline of local and Ray apply steps runs, then reruns fully cached', async () => {
    const prefix = join(root, 'pipeline');
    const first = ray();
    const summary = await new StepRunner({ prefix, executors: [first], logger: quiet }).run([pipeline()]);
    expect(summary.counts).toEqual({ succeeded: 4 });
    const joinPath = pipeline().lower().outputPath(prefix);
    const text = readFileSync(join(joinPath, 'data.txt'), 'utf8');
    expect(text).toMatch(/^seed@local>left@cairn-left-\S+\.1\+seed@local>right@cairn-right-\S+\.1>join@cairn-join-\S+\.1\n$/);
    expect(first.stats.submissions).toBe(3);
    const ids = (await listJobs()).map((j) => j.submission_id).filter((id) => /^cairn-(left|right|join)-/.test(id));
    expect(ids).toHaveLength(3);

    const second = ray();
    const again = await new StepRunner({ prefix, executors: [second], logger: quiet }).run([pipeline()]);
    expect(again.counts).toEqual({ cached: 1 });
    expect(second.stats.submissions).toBe(0);
  }, 120_000);

  test("a failing step's exit code and the tail of its stderr are reported", async () => {
    const prefix = join(root, 'fail');
    const step = apply({ name: 'fails', fn: exit3, version: 'v1', executor: 'ray', retries: 0, inputs: {} });
    await expect(new StepRunner({ prefix, executors: [ray()], logger: quiet }).run([step])).rejects.toThrow(/exited with code 3/);
    const record = JSON.parse(readFileSync(join(step.lower().outputPath(prefix), '.artifact.json'), 'utf8')) as ArtifactRecord;
    const text = JSON.stringify(record);
    expect(text).toContain('exited with code 3');
    expect(text).toContain('disk on fire');
  }, 90_000);
});
