/**
 * A command step's Ray entrypoint, run by the machine's real `/bin/sh` exactly as Ray's job
 * supervisor runs it (`sh -c <entrypoint>`), without a cluster: where the program runs (the
 * project directory when the node sees it, else the staged sources), a source edited after
 * submission, a program that is not there, and how each ending reads (command-status.ts).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { command, input, makeTask, OUT } from '@cairn/core';
import type { JobRequest } from '@cairn/runner/executor';
import { afterAll, describe, expect, test } from 'vitest';
import { buildEntrypoint } from '../src/entrypoint.js';
import { commandOutcome, describeExit } from '../src/command-status.js';

const root = mkdtempSync(join(tmpdir(), 'cairn-ray-entry-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let n = 0;

/** A project with `probe.sh` (reports its working directory and first argument) and the job of a step running it. */
function probeJob(program = 'sh', checkpointDir?: string): { job: JobRequest; project: string } {
  const base = join(root, `case-${++n}`);
  const project = join(base, 'project');
  mkdirSync(join(project, 'lib'), { recursive: true });
  writeFileSync(join(project, 'lib', 'probe.sh'), `printf '{"result":{"cwd":"%s","arg":"%s","ctx":%s}}' "$(pwd)" "$1" "$(cat "$CAIRN_CONTEXT")" > "$CAIRN_RESULT"\necho probed >&2\n`);
  const step = command({ name: 'probe', version: 'v1', program, executor: 'ray', dir: project, sources: ['lib/probe.sh'], args: ['lib/probe.sh', input('word'), OUT], inputs: { word: "it's" } });
  const spec = step.lower();
  const outputPath = join(base, 'out');
  const attemptDir = join(base, 'attempt');
  const logs = { stdout: join(attemptDir, 'stdout.log'), stderr: join(attemptDir, 'stderr.log') };
  const job: JobRequest = {
    jobKey: `${spec.nameWithHash}.1`,
    spec,
    task: { ...makeTask(spec, { outputPath, depPaths: {}, attempt: 1 }), ...(checkpointDir === undefined ? {} : { checkpointDir }) },
    outputPath,
    finalPath: outputPath,
    resources: {},
    logPaths: logs,
    attemptDir,
    signal: new AbortController().signal,
  };
  return { job, project };
}

/** Builds the entrypoint and runs it with `sh -c`; returns the exit code and the outcome Cairn reads from it. */
async function run(job: JobRequest, beforeRun: () => void = () => undefined) {
  const entry = await buildEntrypoint(job, { nodePath: '/nonexistent/node', workerEntry: undefined, sharedFs: true, storeCredentials: 'node', nodeTempDir: '/tmp' });
  beforeRun();
  const r = spawnSync('/bin/sh', ['-c', entry.command], { encoding: 'utf8' });
  const code = r.status as number;
  const outcome = await commandOutcome(code, { step: job.spec.name, id: 'ray-job-1', program: entry.program as string, resultPath: entry.resultPath as string, logPaths: job.logPaths, message: r.stderr });
  return { code, outcome, entry };
}

describe("a command step's Ray entrypoint under /bin/sh", () => {
  test('runs the program in the project directory when the node sees it, with the context file and every value quoted', async () => {
    const { job, project } = probeJob();
    const { code, outcome, entry } = await run(job);
    expect(code).toBe(0);
    // No Node.js, no Cairn worker on the node: only sh and the program.
    expect(entry.command).not.toMatch(/\/nonexistent\/node|worker-entry/);
    expect(outcome).toMatchObject({ state: 'succeeded', result: { cwd: project, arg: "it's", ctx: { step: 'probe', attempt: 1, outputPath: job.outputPath, argv: ['sh', 'lib/probe.sh', "it's", job.outputPath] } } });
    expect(readFileSync(job.logPaths.stderr, 'utf8')).toBe('probed\n');
  });

  test("the program gets the step's checkpoint directory ($CAIRN_CHECKPOINT_DIR and checkpointDir in the context file)", async () => {
    const checkpoints = join(root, 'checkpoints');
    mkdirSync(checkpoints, { recursive: true });
    const { job } = probeJob('sh', checkpoints);
    const { code, outcome } = await run(job);
    expect(code).toBe(0);
    expect(outcome).toMatchObject({ state: 'succeeded', result: { ctx: { checkpointDir: checkpoints } } });
    expect(job.task.checkpointDir).toBe(checkpoints);
    expect((await buildEntrypoint(job, { nodePath: '/nonexistent/node', workerEntry: undefined, sharedFs: true, storeCredentials: 'node', nodeTempDir: '/tmp' })).command).toContain(`CAIRN_CHECKPOINT_DIR=`);
  });

  test("the metadata line the executor appends to the log has the step's secret values masked", async () => {
    const token = 'tok-0123456789abcdef';
    const { job } = probeJob();
    mkdirSync(job.attemptDir, { recursive: true });
    const resultPath = join(job.attemptDir, 'result.json');
    writeFileSync(resultPath, JSON.stringify({ result: 1, metadata: { said: token } }));
    const outcome = await commandOutcome(0, { step: 'probe', id: 'ray-job-1', program: 'sh', resultPath, logPaths: job.logPaths, secrets: { HF_TOKEN: token } });
    expect(outcome).toMatchObject({ state: 'succeeded', result: 1 });
    const log = readFileSync(job.logPaths.stdout, 'utf8');
    expect(log).toContain('metadata {"said":"***"}');
    expect(log).not.toContain(token);
  });

  test('stages the declared sources under their relative paths when the project directory is not there', async () => {
    const { job, project } = probeJob();
    const { code, outcome } = await run(job, () => renameSync(project, `${project}.moved`));
    expect(code).toBe(0);
    expect(outcome).toMatchObject({ state: 'succeeded', result: { cwd: join(job.attemptDir, 'work'), arg: "it's" } });
  });

  test('a declared source edited after submission fails the step (CAIRN_COMMAND_SOURCE) before the program starts', async () => {
    const { job, project } = probeJob();
    const { code, outcome } = await run(job, () => writeFileSync(join(project, 'lib', 'probe.sh'), 'echo edited\n'));
    expect(code).toBe(125);
    expect(outcome.state).toBe('failed');
    expect(String(outcome.error)).toMatch(/CAIRN_COMMAND_SOURCE|declared source lib\/probe\.sh of step "probe" changed/);
    expect((outcome.error as { code: string }).code).toBe('CAIRN_COMMAND_SOURCE');
  });

  test('a program that is not on the node is CAIRN_COMMAND_NOT_FOUND, exit 127', async () => {
    const { job } = probeJob('no-such-program-xyz');
    const { code, outcome } = await run(job);
    expect(code).toBe(127);
    expect((outcome.error as { code: string }).code).toBe('CAIRN_COMMAND_NOT_FOUND');
    expect(String((outcome.error as Error).message)).toMatch(/cannot start "no-such-program-xyz": not found on PATH/);
  });

  test('a declared source edited before submission is refused at submission, naming the step and the fix', async () => {
    const { job, project } = probeJob();
    writeFileSync(join(project, 'lib', 'probe.sh'), 'echo edited\n');
    await expect(buildEntrypoint(job, { nodePath: 'node', workerEntry: undefined, sharedFs: true, storeCredentials: 'node', nodeTempDir: '/tmp' })).rejects.toMatchObject({ code: 'CAIRN_COMMAND_SOURCE', message: expect.stringMatching(/Step "probe": lib\/probe\.sh changed after the pipeline was declared.*run the pipeline again/) });
  });

  test('a program killed by a signal is named so (Ray reports -N; a shell 128+N)', () => {
    expect(describeExit(-9)).toBe('was killed by SIGKILL (exit status -9)');
    expect(describeExit(143)).toBe('was killed by SIGTERM (exit status 143)');
    expect(describeExit(3)).toBe('exited with code 3');
  });

  test('on a filesystem store, refused by an executor without a shared filesystem, saying what to do', async () => {
    const { job } = probeJob();
    await expect(buildEntrypoint(job, { nodePath: 'node', workerEntry: undefined, sharedFs: false, storeCredentials: 'node', nodeTempDir: '/tmp' })).rejects.toThrow(/sharedFs: false, so its jobs read and write the store over the network, which it does for an S3 store[\s\S]*this step's store is on a filesystem\. Use an s3:\/\/ prefix, or share the store's directory with the Ray nodes and set sharedFs: true/);
  });
});
