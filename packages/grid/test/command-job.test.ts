/**
 * A command step's own job on a node, for real: the job script `submitSingle` writes, run by bash
 * as a compute node would (no scheduler involved), and the status the executor makes of the
 * files it leaves. The refusals a job script makes before the program starts (a declared source
 * edited while the job waited, a missing program, a project directory the node does not see)
 * come back as typed errors naming the step and the fix. The metadata line the executor appends
 * to the log masks the step's secret values.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { command, hasCode, input, lower, makeTask, OUT, type CommandEnvironment } from '@cairn/core';
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
function project(program: string, args: (string | typeof OUT)[], script = 'echo ran > "$1/ran"\n', extra: { preemptionExitCodes?: number[]; checkpointDir?: string; environment?: CommandEnvironment } = {}): { dir: string; job: JobRequest } {
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
    resources: {},
    logPaths: logs,
    attemptDir,
    finalPath: outputPath,
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

  test("the metadata line the executor appends to the log has the step's secret values masked", async () => {
    const token = 'tok-0123456789abcdef';
    const { job } = project('sh', ['tool.sh', OUT], `printf '{"result": 1, "metadata": {"said": "${token}"}}' > "$CAIRN_RESULT"\n`);
    const handle = await submitSingle(ctx, job);
    spawnSync('bash', [jobFiles(job.attemptDir).script], { stdio: 'ignore' });
    const tracked = trackedFrom(handle, scheduler.idKey)!;
    tracked.secrets = { HF_TOKEN: token };
    expect(await commandStatus(tracked, tracked.command!, 0, scheduler.label)).toMatchObject({ state: 'succeeded', result: 1 });
    const log = readFileSync(job.logPaths.stdout, 'utf8');
    expect(log).toContain('INFO metadata {"said":"***"}');
    expect(log).not.toContain(token);
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

  test("runs the program in the step's venv (a real one) under its wrap prefix; a missing venv is CAIRN_COMMAND_NOT_FOUND", async () => {
    const venv = join(root, `venv-${++n}`);
    execFileSync('python3', ['-m', 'venv', '--without-pip', venv]);
    const lib = join(venv, 'lib');
    writeFileSync(join(lib, readdirSync(lib).find((d) => d.startsWith('python')) as string, 'site-packages', 'only_in_venv.py'), 'WHERE = "venv"\n');
    const code = 'import json, os, sys, only_in_venv; json.dump({"result": [only_in_venv.WHERE, sys.prefix, os.environ["VIRTUAL_ENV"], os.environ["WRAPPED"]]}, open(os.environ["CAIRN_RESULT"], "w"))';
    const { job } = project('python3', ['-c', code], 'WRAPPED="$1"; export WRAPPED; shift; exec "$@"\n', { environment: { venv, wrap: ['sh', 'tool.sh', 'by-wrap'] } });
    const { status } = await runJob(job, await submitSingle(ctx, job));
    expect(status).toMatchObject({ state: 'succeeded', result: ['venv', venv, venv, 'by-wrap'] });

    const missing = project('python3', ['-c', 'pass'], undefined, { environment: { venv: join(root, 'no-such-venv') } });
    const m = await runJob(missing.job, await submitSingle(ctx, missing.job));
    expect(m.exit?.code).toBe(127);
    expect(hasCode(m.status.error, 'CAIRN_COMMAND_NOT_FOUND')).toBe(true);
    expect(String((m.status.error as Error).message)).toContain(`its venv ${join(root, 'no-such-venv')} has no bin/ directory here; create it`);
  });

  test('a dependency on an object store reaches the program as the local directory the job\'s store access fetched (never the s3:// URL)', async () => {
    const i = ++n;
    const dir = join(root, `project-${i}`);
    mkdirSync(dir, { recursive: true });
    const make = command({ name: `make${i}`, version: 'v1', program: 'sh', args: ['-c', 'true'], dir, executor: 'test' });
    const count = command({ name: `count${i}`, version: 'v1', program: 'sh', args: ['-c', 'wc -w < "$1/data.txt" | tr -d " " > "$2/n"; printf \'{"result": ["%s", "%s"]}\' "$1" "$DATA" > "$CAIRN_RESULT"', 'count', input('data'), OUT], inputs: { data: make }, env: { DATA: input('data') }, dir, executor: 'test' });
    const spec = lower(count);
    const url = `s3://bucket/${spec.deps[0]!.nameWithHash}`;
    // The boundary this test does not exercise (the S3 store's download, tested against a real gateway in store-s3): a directory already fetched.
    const fetched = join(root, `fetched-${i}`);
    mkdirSync(fetched, { recursive: true });
    writeFileSync(join(fetched, 'data.txt'), 'a b c d\n');
    const asked: string[] = [];
    const storeAccess = { store: undefined, localInput: async (p: string) => (asked.push(p), fetched) };
    const outputPath = join(root, 'store', spec.nameWithHash);
    const attemptDir = join(root, 'attempts', `${spec.nameWithHash}.1`);
    const logs = { stdout: join(attemptDir, 'stdout.log'), stderr: join(attemptDir, 'stderr.log') };
    const task = makeTask(spec, { outputPath, depPaths: { [spec.deps[0]!.nameWithHash]: url }, attempt: 1, resources: {} });
    const job: JobRequest = { jobKey: `${spec.nameWithHash}.1`, spec, task, outputPath, resources: {}, logPaths: logs, attemptDir, finalPath: outputPath, signal: new AbortController().signal, storeAccess };
    const { status } = await runJob(job, await submitSingle(ctx, job));
    expect(asked).toEqual([url]);
    expect(status).toMatchObject({ state: 'succeeded', result: [fetched, fetched] });
    expect(readFileSync(join(outputPath, 'n'), 'utf8')).toBe('4\n');
    expect(JSON.parse(readFileSync(join(attemptDir, 'context.json'), 'utf8')).depPaths).toEqual({ [spec.deps[0]!.nameWithHash]: fetched });
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
