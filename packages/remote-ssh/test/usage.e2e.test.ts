/**
 * What a step used on an SSH host (a real sshd on loopback): the far side's worker measures its
 * own process tree (runner worker/self-usage.ts), or the command wrapper samples its program's
 * (runner usage/usage-sh.ts), and the executor copies `usage.json` back next to the attempt's files. A step whose child holds ~200 MB and burns ~1 s of CPU shows at
 * least 150 MB and 0.5 s.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { command, OUT, StepSpec } from '@cairn/core';
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

  it('a command step: the shell wrapper measures the program (times, ps, awk), no Node needed', async () => {
    const prefix = scratch();
    const hog = 'import os, sys, time\nos.makedirs(sys.argv[1], exist_ok=True)\nb = bytearray(200 * 2**20)\nfor i in range(0, len(b), 4096): b[i] = 1\nt = time.process_time()\nwhile time.process_time() - t < 1.0: sum(range(1000))\n';
    const step = command({ name: 'hog-cmd', version: 'v1', executor: 'ssh', program: 'python3', args: ['-c', hog, OUT, 'cairn-usage-hog'], dir: prefix });
    const executor = createSshExecutor({ hosts: [hostOf(a, 'a')], pollIntervalMs: 50 });
    const spec = step.lower();
    const result = await new StepRunner({ prefix, executors: [executor], logger: { info() {}, warn() {}, error() {} } }).run([spec], { handleSigint: false });
    expect(result.outcome(spec)?.state).toBe('succeeded');
    const usage = await readUsage(join(spec.outputPath(prefix), '.cairn', 'attempt-1'));
    expect(usage).toMatchObject({ executor: 'ssh', cpuScope: 'tree', memoryKind: 'rss', memoryScope: 'tree', exitCode: 0, sampleIntervalMs: 1000 });
    expect(usage!.cpuMs!).toBeGreaterThanOrEqual(500);
    expect(usage!.peakMemoryBytes!).toBeGreaterThanOrEqual(150 * MB);
    expect(usage).not.toHaveProperty('gpuPeakMemoryBytes');
  }, 120_000);

  it('a step of the persistent worker: its thread, plus the subprocesses it started (sampled there), sent back with `done`', async () => {
    const prefix = scratch();
    const step = new StepSpec({ name: 'hog-worker', executor: 'ssh', ref: { module: STEPS, export: 'hog' } });
    const executor = createSshExecutor({ hosts: [hostOf(a, 'a')], pollIntervalMs: 50, worker: 'always' });
    const result = await new StepRunner({ prefix, executors: [executor], logger: { info() {}, warn() {}, error() {} } }).run([step], { handleSigint: false });
    expect(result.outcome(step)?.state).toBe('succeeded');
    const usage = await readUsage(join(step.outputPath(prefix), '.cairn', 'attempt-1'));
    expect(usage).toMatchObject({ executor: 'ssh', cpuScope: 'tree', memoryKind: 'heap', exitCode: 0 });
    expect(usage!.childCpuMs!).toBeGreaterThanOrEqual(500);
    expect(usage!.cpuMs!).toBeGreaterThanOrEqual(usage!.childCpuMs!);
    expect(usage!.childPeakRssBytes!).toBeGreaterThanOrEqual(150 * MB);
  }, 120_000);
});
