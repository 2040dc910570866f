/**
 * Usage of a step's whole process tree, measured on the real local executors: a step whose child
 * holds ~200 MB and burns ~1 s of CPU shows a peak of at least 150 MB and at least 0.5 s of CPU,
 * for function steps (`process`, `threads`) and command steps (`inline`, `threads`, `process`);
 * GPU numbers come from a fake `nvidia-smi` on PATH, and are absent without one.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apply, command, OUT, type StepSpec } from '@cairn/core';
import { readUsage, StepRunner, type AttemptUsage } from '../src/index.js';
import { HOG, spawnHog } from './fixtures/usage-steps.mjs';
import { writeFakeNvidiaSmi } from '../../../tools/testenv/fake-nvidia-smi.js';

const MB = 2 ** 20;
let dir: string;
let fakeBin: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cairn-usage-tree-'));
  fakeBin = writeFakeNvidiaSmi(dir, { marker: 'cairn-usage-hog', usedMiB: 1234, utilization: 40 });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs `spec` alone on `executor` (with the fake nvidia-smi first on PATH when `gpu`); its attempt's usage. */
async function usageOf(name: string, executor: string, spec: StepSpec, gpu: boolean): Promise<AttemptUsage> {
  const prefix = join(dir, name);
  const path = process.env.PATH;
  if (gpu) process.env.PATH = `${fakeBin}${delimiter}${path ?? ''}`;
  try {
    const runner = new StepRunner({ prefix, defaultExecutor: executor });
    await runner.run([spec]);
  } finally {
    process.env.PATH = path;
  }
  const usage = await readUsage(join(spec.outputPath(prefix), '.cairn', 'attempt-1'));
  expect(usage).not.toBeNull();
  return usage!;
}

const fnStep = (name: string) => apply({ name, fn: spawnHog, version: 'v1', inputs: { mb: 200, cpuMs: 1000, out: OUT } }).lower();
const cmdStep = (name: string) => command({ name, version: 'v1', program: process.execPath, args: [HOG, OUT, '200', '1000', 'cairn-usage-hog'], dir }).lower();

function expectHeavy(u: AttemptUsage, peak: number | undefined): void {
  expect(u.cpuMs!).toBeGreaterThanOrEqual(500);
  expect(peak!).toBeGreaterThanOrEqual(150 * MB);
  expect(u.wallMs!).toBeGreaterThan(0);
  expect(u.sampleIntervalMs).toBeGreaterThan(0);
}

function expectFakeGpu(u: AttemptUsage): void {
  // Only the step's own process on GPU-fake-0 counts, not someone else's on GPU-fake-1.
  expect(u.gpuPeakMemoryBytes).toBe(1234 * MB);
  expect(u.gpuUtilizationPercent).toBe(40);
}

function expectNoGpu(u: AttemptUsage): void {
  expect(u).not.toHaveProperty('gpuPeakMemoryBytes');
  expect(u).not.toHaveProperty('gpuUtilizationPercent');
}

describe('usage of the whole process tree', () => {
  it('process: the worker and the child it starts', async () => {
    const u = await usageOf('process-fn', 'process', fnStep('hog-process'), true);
    expect(u).toMatchObject({ executor: 'process', cpuScope: 'tree', memoryKind: 'rss', memoryScope: 'tree', exitCode: 0 });
    expectHeavy(u, u.peakMemoryBytes);
    expectFakeGpu(u);
  });

  it('threads: the processes a function step starts, next to its thread', async () => {
    const u = await usageOf('threads-fn', 'threads', fnStep('hog-threads'), true);
    expect(u).toMatchObject({ executor: 'threads', cpuScope: 'tree', memoryKind: 'heap' });
    expect(u.childCpuMs!).toBeGreaterThanOrEqual(500);
    expectHeavy(u, u.childPeakRssBytes);
    expectFakeGpu(u);
  });

  it('command steps on inline, threads and process: the program', async () => {
    for (const executor of ['inline', 'threads', 'process']) {
      const u = await usageOf(`cmd-${executor}`, executor, cmdStep(`hog-cmd-${executor}`), executor !== 'process');
      expect(u).toMatchObject({ executor, cpuScope: 'tree', memoryKind: 'rss', memoryScope: 'tree', exitCode: 0 });
      expectHeavy(u, u.peakMemoryBytes);
      if (executor === 'process') expectNoGpu(u);
      else expectFakeGpu(u);
    }
  });

  it('without nvidia-smi on PATH, the GPU fields are absent ("not measured")', async () => {
    const u = await usageOf('no-gpu', 'threads', fnStep('hog-no-gpu'), false);
    expectNoGpu(u);
  });

  it('inline function steps: a labelled best effort, only for steps of a second or more', async () => {
    const slow = apply({ name: 'slow-inline', fn: async () => new Promise((r) => setTimeout(r, 1100)), version: 'v1', inputs: { out: OUT } }).lower();
    const u = await usageOf('inline-fn', 'inline', slow, false);
    expect(u).toMatchObject({ executor: 'inline', cpuScope: 'runner', memoryScope: 'runner', bestEffort: true });
    expect(u.note).toMatch(/shared/);
    const quick = apply({ name: 'quick-inline', fn: async () => 1, version: 'v1', inputs: { out: OUT } }).lower();
    const prefix = join(dir, 'inline-quick');
    await new StepRunner({ prefix }).run([quick]);
    expect(await readUsage(join(quick.outputPath(prefix), '.cairn', 'attempt-1'))).toBeNull();
  });
});
