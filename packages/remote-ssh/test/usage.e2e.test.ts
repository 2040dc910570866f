/**
 * What a step used on an SSH host (a real sshd on loopback): the far side's worker measures its
 * own process tree (runner worker/self-usage.ts) and the executor copies `usage.json` back next
 * to the attempt's files. A step whose child holds ~200 MB and burns ~1 s of CPU shows at
 * least 150 MB and 0.5 s.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { StepSpec } from '@cairn/core';
import { readUsage, StepRunner } from '@cairn/runner';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSshExecutor } from '../src/index.js';
import { hostOf, removeScratch, scratch, sshdOrSkip, startSshd, type SshdInstance } from './helpers.js';

const run = sshdOrSkip();
const STEPS = pathToFileURL(join(import.meta.dirname, 'fixtures', 'usage-steps.mjs')).href;
const MB = 2 ** 20;

describe.runIf(run)('usage of a step on an SSH host', () => {
  let a: SshdInstance;
  beforeAll(async () => {
    a = await startSshd();
  });
  afterAll(async () => {
    await a?.stop();
    removeScratch();
  });

  it('a detached job: the worker and its child, measured there and copied back', async () => {
    const prefix = scratch();
    const step = new StepSpec({ name: 'hog', executor: 'ssh', ref: { module: STEPS, export: 'hog' } });
    const executor = createSshExecutor({ hosts: [hostOf(a, 'a')], pollIntervalMs: 50, worker: 'never' });
    const result = await new StepRunner({ prefix, executors: [executor], logger: { info() {}, warn() {}, error() {} } }).run([step], { handleSigint: false });
    expect(result.outcome(step)?.state).toBe('succeeded');
    const usage = await readUsage(join(step.outputPath(prefix), '.cairn', 'attempt-1'));
    expect(usage).toMatchObject({ executor: 'ssh', cpuScope: 'tree', memoryKind: 'rss', memoryScope: 'tree', exitCode: 0 });
    expect(usage!.cpuMs!).toBeGreaterThanOrEqual(500);
    expect(usage!.peakMemoryBytes!).toBeGreaterThanOrEqual(150 * MB);
    expect(usage!.wallMs!).toBeGreaterThan(0);
    // No nvidia-smi on the host's PATH: not measured, so absent.
    expect(usage).not.toHaveProperty('gpuPeakMemoryBytes');
  }, 120_000);
});
