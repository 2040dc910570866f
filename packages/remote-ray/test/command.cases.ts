/**
 * Command steps (programs) on the real Ray cluster of ray.test.ts: registered inside its
 * `describe`, so they share its cluster (one start per file). The program runs with a POSIX
 * shell on the Ray node; no Node.js is needed there.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { makeTask, type ArtifactStep } from '@cairn/core';
import { StepRunner, type ArtifactRecord } from '@cairn/runner';
import type { JobRequest } from '@cairn/runner/executor';
import { expect, test } from 'vitest';
import { RecordingHost } from '../../../tools/testenv/grid-jobs.js';
import type { RayCluster } from '../../../tools/testenv/ray.js';
import type { RayExecutor, RayExecutorOptions } from '../src/index.js';
import { countPipeline, failing, PROJECT, sleeper } from './fixtures/commands.mjs';

/** What the cases need from ray.test.ts. */
export interface CommandCaseEnv {
  readonly cluster: () => RayCluster;
  readonly root: string;
  readonly ray: (extra?: RayExecutorOptions) => RayExecutor;
  readonly quiet: { info(): void; warn(): void; error(): void };
  readonly waitFor: <T>(what: string, probe: () => Promise<T | undefined>, timeoutMs?: number) => Promise<T>;
}

/** A JobRequest for attempt 1 of `step` (no dependencies), with fresh directories under `root`. */
function commandJob(root: string, step: ArtifactStep<unknown>): JobRequest {
  const spec = step.lower();
  const outputPath = join(root, 'store', spec.nameWithHash);
  const attemptDir = join(root, 'attempts', `${spec.nameWithHash}.1`);
  const logs = { stdout: join(attemptDir, 'stdout.log'), stderr: join(attemptDir, 'stderr.log') };
  return {
    jobKey: `${spec.nameWithHash}.1`,
    spec,
    task: makeTask(spec, { outputPath, depPaths: {}, attempt: 1, resources: spec.resources ?? {} }),
    outputPath,
    finalPath: outputPath,
    resources: spec.resources ?? {},
    logPaths: logs,
    attemptDir,
    signal: new AbortController().signal,
  };
}

const record = (path: string): ArtifactRecord => JSON.parse(readFileSync(join(path, '.artifact.json'), 'utf8')) as ArtifactRecord;

/** Is process `pid` alive? */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function commandCases(env: CommandCaseEnv): void {
  test('a Python command step on Ray reads its dependency, writes its output and reports its result through cairn_step; one GPU from Ray reaches it', async () => {
    const prefix = join(env.root, 'cmd-python');
    const step = countPipeline('py', { resources: { gpus: 1 } });
    const summary = await new StepRunner({ prefix, executors: [env.ray()], logger: env.quiet }).run([step]);
    expect(summary.counts).toEqual({ succeeded: 2 });
    const path = step.lower().outputPath(prefix);
    expect(readFileSync(join(path, 'count.txt'), 'utf8')).toBe('1\n');
    const r = record(path);
    expect(r.result).toMatchObject({
      words: 1,
      argv: ['--text', expect.stringContaining('seed'), "it's quoted; $HOME `x`", '--attempt', '1', '--out', expect.any(String)],
      // The project directory is on the shared filesystem: the program runs there.
      cwd: PROJECT.replace(/\/$/, ''),
      cuda: expect.stringMatching(/^[01]$/),
      job: expect.stringMatching(/^cairn-count-/),
      attempt: '1',
    });
    const result = r.result as { cuda: string; gpuIndices: number[] };
    expect(result.gpuIndices).toEqual([Number(result.cuda)]);
    // stdout, stderr and the reported metadata are in the attempt's logs.
    const logs = JSON.stringify(r);
    expect(logs).not.toContain('CAIRN_COMMAND');
    const published = readFileSync(join(path, '.cairn', 'logs', 'attempt-1.stdout'), 'utf8');
    expect(published).toContain('counted 1 words of');
    expect(published).toContain('metadata {"words":1}');
    expect(readFileSync(join(path, '.cairn', 'logs', 'attempt-1.stderr'), 'utf8')).toContain('a line on stderr');

    const again = env.ray();
    expect((await new StepRunner({ prefix, executors: [again], logger: env.quiet }).run([countPipeline('py', { resources: { gpus: 1 } })])).counts).toEqual({ cached: 1 });
    expect(again.stats.submissions).toBe(0);
  }, 120_000);

  test("a failing program on Ray: CAIRN_COMMAND_FAILED with its exit code and the tail of its stderr", async () => {
    const prefix = join(env.root, 'cmd-fail');
    const step = failing();
    await expect(new StepRunner({ prefix, executors: [env.ray()], logger: env.quiet }).run([step])).rejects.toThrow(/python3 exited with code 3 \(Ray job cairn-fails-[^)]+\)\.\nstderr \(last lines\):\nabout to fail: disk on fire/);
    const text = JSON.stringify(record(step.lower().outputPath(prefix)));
    expect(text).toContain('CAIRN_COMMAND_FAILED');
    expect(text).toContain('disk on fire');
  }, 90_000);

  test('a Ray node without Node.js on its PATH still runs a command step', async () => {
    // The program's PATH (the step's env, exported by the entrypoint): python3 and the shell
    // tools the entrypoint uses, no node; and the executor's nodePath points nowhere.
    const bin = join(env.root, 'bin-without-node');
    mkdirSync(bin, { recursive: true });
    for (const tool of ['sh', 'hostname', 'cmp', 'cp', 'mkdir', 'mv', 'tail']) {
      symlinkSync(execFileSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).trim(), join(bin, tool));
    }
    // The interpreter itself, not a shim (pyenv's are bash scripts).
    symlinkSync(execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim(), join(bin, 'python3'));
    expect(existsSync(join(bin, 'node'))).toBe(false);
    const prefix = join(env.root, 'cmd-no-node');
    const step = countPipeline('nonode', { env: { PATH: bin } });
    const executor = env.ray({ nodePath: '/nonexistent/bin/node' });
    const summary = await new StepRunner({ prefix, executors: [executor], logger: env.quiet }).run([step]);
    expect(summary.counts).toEqual({ succeeded: 2 });
    expect(record(step.lower().outputPath(prefix)).result).toMatchObject({ words: 1, node: null });
  }, 90_000);

  test('`ray job stop` from outside stops a command step and what it started: cancelled (STOPPED)', async () => {
    const host = new RecordingHost(join(env.root, 'cmd-stop', 'store'));
    const executor = env.ray();
    await executor.start(host);
    try {
      const job = commandJob(join(env.root, 'cmd-stop'), sleeper('stop'));
      const handle = await executor.submit(job);
      const pidFile = join(job.outputPath, 'sleep.pid');
      const pid = await env.waitFor('the program to start its sleep', async () => (existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() ? Number(readFileSync(pidFile, 'utf8')) : undefined));
      expect(alive(pid)).toBe(true);
      const cluster = env.cluster();
      execFileSync(cluster.ray, ['job', 'stop', '--address', cluster.address, String(handle.info.submissionId)], { env: { ...process.env, RAY_USAGE_STATS_ENABLED: '0' }, stdio: 'pipe' });
      expect(await host.final(job.jobKey, 30_000)).toMatchObject({ state: 'cancelled', reason: 'STOPPED' });
      // Ray signals the entrypoint's process group: the sleep the program started goes too.
      await env.waitFor('the sleep to be gone', async () => (alive(pid) ? undefined : true), 15_000);
    } finally {
      await executor.stop();
    }
  }, 90_000);
}
