/**
 * A command step's own job on a node, for real: the job script `submitSingle` writes, run by bash
 * as a compute node would (no scheduler involved), and the status the executor makes of the
 * files it leaves. The refusals a job script makes before the program starts (a declared source
 * edited while the job waited, a missing program, a project directory the node does not see)
 * come back as typed errors naming the step and the fix.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { command, hasCode, lower, makeTask, OUT } from '@cairn/core';
import { afterAll, describe, expect, test } from 'vitest';
import { tempRoot } from '../../../tools/testenv/grid-jobs.js';
import { commandStatus } from '../src/command-status.js';
import { jobFiles, parseExitFile, type GridScheduler, type SubmitRequest } from '../src/index.js';
import type { JobHandle, JobRequest } from '../src/runner-api.js';
import { submitSingle, type GridCounters } from '../src/submission.js';
import { trackedFrom } from '../src/tracked.js';

const root = tempRoot('cairn-grid-command-');
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Captures the submission: these tests run the script themselves. */
const scheduler: GridScheduler = {
  name: 'test',
  label: 'Test',
  idKey: 'testJobId',
  transport: 'none',
  arrayTaskVar: 'CAIRN_TEST_TASK',
  enforcedLimit: (s) => s,
  submit: async (_: SubmitRequest) => '7',
  taskId: (a, i) => `${a}.${i}`,
  query: async () => new Map(),
  finished: async () => new Map(),
  cancel: async () => undefined,
};
const counters = (): GridCounters => ({ submissions: 0, steps: 0, statusQueries: 0, accountingQueries: 0, cancellations: 0 });
const ctx = { scheduler, name: 'test', options: { nodePath: '/nonexistent/node' }, counters: counters(), limit: <T>(fn: () => Promise<T>) => fn() };

let n = 0;
/** A project with `tool.sh` (a declared source) and a JobRequest of a command step that runs `program`. */
function project(program: string, args: (string | typeof OUT)[], script = 'echo ran > "$1/ran"\n', extra: { preemptionExitCodes?: number[]; checkpointDir?: string } = {}): { dir: string; job: JobRequest } {
  const i = ++n;
  const dir = join(root, `project-${i}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'tool.sh'), script);
  // A named remote executor: the program is looked for on the node, not when the step is declared.
  const { checkpointDir, ...options } = extra;
  const spec = lower(command({ name: `tool${i}`, version: 'v1', program, args, sources: ['tool.sh'], dir, executor: 'test', ...options }));
  const outputPath = join(root, 'store', spec.nameWithHash);
  const attemptDir = join(root, 'attempts', `${spec.nameWithHash}.1`);
  const logs = { stdout: join(attemptDir, 'stdout.log'), stderr: join(attemptDir, 'stderr.log') };
  const made = makeTask(spec, { outputPath, depPaths: {}, attempt: 1, resources: {} });
  const task = checkpointDir === undefined ? made : { ...made, checkpointDir };
  const job: JobRequest = {
    jobKey: `${spec.nameWithHash}.1`,
    spec,
    task,
    outputPath,
    prefix: join(root, 'store'),
    resources: {},
    logPaths: logs,
    attemptDir,
    finalPath: outputPath,
    staged: { path: outputPath, dir: outputPath, attempt: 1, logs, scratch: attemptDir },
    signal: new AbortController().signal,
  };
  return { dir, job };
}

/** Runs the job's script as a node would, and returns the status the executor reports for it. */
async function runJob(job: JobRequest, handle: JobHandle) {
  spawnSync('bash', [jobFiles(job.attemptDir).script], { stdio: 'ignore' });
  const exit = parseExitFile(readFileSync(jobFiles(job.attemptDir).exit, 'utf8'));
  const tracked = trackedFrom(handle, scheduler.idKey)!;
  return { exit, status: await commandStatus(tracked, tracked.command!, exit!.code, scheduler.label) };
}

describe("a command step's job script", () => {
  test('runs the program in the project directory with its CAIRN_* context; its result comes back', async () => {
    const { dir, job } = project('sh', ['tool.sh', OUT], 'pwd > "$1/ran"; printf \'{"result": {"attempt": "%s", "step": "%s"}}\' "$CAIRN_ATTEMPT" "$CAIRN_STEP" > "$CAIRN_RESULT"\n');
    const { exit, status } = await runJob(job, await submitSingle(ctx, job));
    expect(exit).toEqual({ code: 0, signal: null });
    expect(readFileSync(join(job.outputPath, 'ran'), 'utf8')).toBe(`${dir}\n`);
    expect(status).toMatchObject({ state: 'succeeded', result: { attempt: '1', step: job.spec.name } });
    expect(JSON.parse(readFileSync(join(job.attemptDir, 'context.json'), 'utf8'))).toMatchObject({ cairn: 1, step: job.spec.name, attempt: 1, outputPath: job.outputPath });
  });

  test('refuses a declared source edited after the job was submitted (CAIRN_COMMAND_SOURCE); the program never starts', async () => {
    const { dir, job } = project('sh', ['tool.sh', OUT]);
    const handle = await submitSingle(ctx, job);
    writeFileSync(join(dir, 'tool.sh'), 'echo edited while queued > "$1/ran"\n');
    const { exit, status } = await runJob(job, handle);
    expect(exit).toEqual({ code: 127, signal: null });
    expect(existsSync(join(job.outputPath, 'ran'))).toBe(false);
    expect(status.state).toBe('failed');
    expect(hasCode(status.error, 'CAIRN_COMMAND_SOURCE')).toBe(true);
    expect(String((status.error as Error).message)).toContain(`Step "${job.spec.name}": tool.sh changed (or cannot be read) after the job was submitted; run the pipeline again`);
  });

  test('refuses at submission a source edited since the step was declared', async () => {
    const { dir, job } = project('sh', ['tool.sh', OUT]);
    writeFileSync(join(dir, 'tool.sh'), 'echo edited\n');
    await expect(submitSingle(ctx, job)).rejects.toMatchObject({ code: 'CAIRN_COMMAND_SOURCE', message: expect.stringContaining('tool.sh changed after the pipeline was declared') });
  });

  test('a missing program is CAIRN_COMMAND_NOT_FOUND naming it and the node', async () => {
    const { job } = project('cairn-no-such-program', ['tool.sh']);
    const { exit, status } = await runJob(job, await submitSingle(ctx, job));
    expect(exit?.code).toBe(127);
    expect(hasCode(status.error, 'CAIRN_COMMAND_NOT_FOUND')).toBe(true);
    expect(String((status.error as Error).message)).toMatch(/cannot start "cairn-no-such-program": not found \(or not executable\) on node \S+ \(PATH=/);
  });

  test('a project directory the node does not see is a typed error, not a crash', async () => {
    const { dir, job } = project('sh', ['tool.sh', OUT]);
    const handle = await submitSingle(ctx, job);
    renameSync(dir, `${dir}-moved`);
    const { status } = await runJob(job, handle);
    expect(hasCode(status.error, 'CAIRN_COMMAND_SOURCE')).toBe(true);
    expect(String((status.error as Error).message)).toContain(`its project directory ${dir} is not visible on node`);
  });

  test('a preemption exit code is CAIRN_PREEMPTED (retried from preemptionRetries); the program got $CAIRN_CHECKPOINT_DIR', async () => {
    const checkpoints = join(root, 'checkpoints-preempted');
    mkdirSync(checkpoints, { recursive: true });
    const { job } = project('sh', ['tool.sh'], 'echo epoch-1 > "$CAIRN_CHECKPOINT_DIR/ckpt-1"; exit 75\n', { preemptionExitCodes: [75], checkpointDir: checkpoints });
    const { exit, status } = await runJob(job, await submitSingle(ctx, job));
    expect(exit?.code).toBe(75);
    expect(readFileSync(join(checkpoints, 'ckpt-1'), 'utf8')).toBe('epoch-1\n');
    expect(status.state).toBe('failed');
    expect(status.preempted).toBe(true);
    expect(hasCode(status.error, 'CAIRN_PREEMPTED')).toBe(true);
    // Another exit code of the same step is an ordinary failure.
    const other = project('sh', ['tool.sh'], 'exit 3\n', { preemptionExitCodes: [75] });
    const failed = await runJob(other.job, await submitSingle(ctx, other.job));
    expect(failed.status.preempted).toBeUndefined();
    expect(hasCode(failed.status.error, 'CAIRN_COMMAND_FAILED')).toBe(true);
  });

  test('a program killed by a signal: the code names the signal, the message quotes stderr', async () => {
    const { job } = project('sh', ['tool.sh'], 'echo "about to die" >&2; kill -9 $$\n');
    const { status } = await runJob(job, await submitSingle(ctx, job));
    expect(status).toMatchObject({ state: 'failed', exitCode: 137 });
    expect(hasCode(status.error, 'CAIRN_COMMAND_FAILED')).toBe(true);
    expect(String((status.error as Error).message)).toContain('sh exited with code 137 (killed by SIGKILL) (Test job 7).\nstderr (last lines):\nabout to die');
  });
});
