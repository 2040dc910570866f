/**
 * Runs one attempt of a command step (the reserved `cairn:command` function), on whichever
 * local executor or worker the step landed: checks its declared sources are still what the
 * identity was made from, writes the context file, starts the program in its own process group
 * with its output going to the attempt's logs, stops the group when the step must stop, and
 * turns the exit into the step's result or a typed failure.
 */
import { closeSync, mkdirSync, openSync, readFileSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { CairnError, type CommandTemplate, type StepContext } from '@cairn/core';
import { isPromise } from '../maybe.js';
import { logPathsOf } from './log-paths.js';
import { parseReportedResult } from './result-file.js';
import { type Group, type GroupPipes, type StartOptions, startGroup } from './process-group.js';
import { readTemplate, checkSourcesNow } from './template.js';
import { fileTail, TailRing } from './tail.js';
import { commandArgs, commandContext, commandEnv, commandLaunch, type CommandLaunch } from './context-file.js';
import { fetchLocalDeps, localDepPaths, localize } from './local-deps.js';
import { attemptFiles, removeAttemptFiles, writeContext } from './scratch.js';
import { programUsageSinkOf } from './usage-sink.js';
import { startMeter } from '../usage/sampler.js';

/** Grace between SIGTERM and SIGKILL when the step sets none. */
export const DEFAULT_KILL_GRACE_MS = 1000;

/**
 * The reserved command runner: `template` is the step's resolved inputs template
 * ({@link CommandTemplate}). Resolves with the result the program reported (`undefined` when it
 * reported none); rejects with `CAIRN_COMMAND_*` errors, or with the abort reason when the step
 * was stopped.
 */
export async function runCommand(template: unknown, ctx: StepContext): Promise<unknown> {
  const step = ctx.name;
  const t = readTemplate(step, template);
  checkSourcesNow(step, t);
  ctx.signal.throwIfAborted();
  const checkpointDir = ctx.checkpointDir;
  if (checkpointDir !== undefined) ensureCheckpointDir(step, checkpointDir);
  // Dependencies on an object store are fetched, and the program sees their local directories (local-deps.ts).
  const fetching = fetchLocalDeps(ctx);
  const local = isPromise(fetching) ? await fetching : fetching;
  ctx.signal.throwIfAborted();
  const files = attemptFiles();
  // Whether a result file may be there to remove (most programs write none: not looked for again).
  let resultMaybe = true;
  try {
    const { contextPath, resultPath } = files;
    const attempt = { step, attempt: ctx.attempt, outputPath: ctx.outputPath, depPaths: localDepPaths(ctx.depPaths, local), gpuIndices: ctx.resources.gpuIndices, contextPath, resultPath, checkpointDir };
    const argv = localize(commandArgs(t, attempt), local);
    writeContext(files, JSON.stringify(localize(commandContext(t, attempt), local)));
    const launch = commandLaunch(t, argv);
    const env = launchEnv(step, launch, localize(commandEnv(t, attempt), local));
    // Not inherited from the runner's own environment: a step without one has none.
    if (attempt.checkpointDir === undefined) delete env.CAIRN_CHECKPOINT_DIR;
    const exit = await runProgram(step, t, launch.argv, env, ctx);
    if (ctx.signal.aborted) throw ctx.signal.reason;
    if (exit.failure !== undefined) throw exit.failure;
    const text = readResultFile(resultPath);
    resultMaybe = text !== undefined;
    return text === undefined ? undefined : reportedResult(step, t.program, text, ctx);
  } finally {
    removeAttemptFiles(files, resultMaybe);
  }
}

/** The program's environment: the runner's, the step's `env` and `CAIRN_*`, then its venv or conda prefix activated. */
function launchEnv(step: string, launch: CommandLaunch, vars: Record<string, string>): NodeJS.ProcessEnv {
  if (launch.require !== undefined && !exists(launch.require.dir)) {
    throw new CairnError('CAIRN_COMMAND_NOT_FOUND', `Step "${step}": ${launch.require.fix}.`, { step });
  }
  const env: NodeJS.ProcessEnv = { ...process.env, ...vars, ...launch.set };
  for (const k of launch.unset) delete env[k];
  if (launch.pathFirst.length > 0) env.PATH = [...launch.pathFirst, ...(env.PATH ? [env.PATH] : [])].join(':');
  return env;
}

/** Starts the program (`argv[0]`) and waits for it; `failure` is set when it did not exit 0. */
async function runProgram(step: string, t: CommandTemplate, argv: readonly string[], env: NodeJS.ProcessEnv, ctx: StepContext): Promise<{ failure?: CairnError }> {
  const logs = logPathsOf(ctx);
  let stderrFrom = 0;
  let ring: TailRing | undefined;
  let drained: Promise<unknown> | undefined;
  let group: Group;
  if (logs !== undefined) {
    // Straight into the log files: the program writes them itself (nothing copied or buffered here).
    mkdirSync(dirname(logs.stdout), { recursive: true });
    if (dirname(logs.stderr) !== dirname(logs.stdout)) mkdirSync(dirname(logs.stderr), { recursive: true });
    const out = openSync(logs.stdout, 'a');
    const err = openSync(logs.stderr, 'a');
    try {
      stderrFrom = statSync(logs.stderr).size;
      const started = start(step, t, argv, env, { stdout: out, stderr: err });
      group = isPromise(started) ? await started : started;
    } finally {
      closeSync(out);
      closeSync(err);
    }
  } else {
    const started = start(step, t, argv, env, undefined);
    group = isPromise(started) ? await started : started;
    const pipes = group.pipes as GroupPipes;
    drained = pipes.closed;
    ring = new TailRing();
    forward(pipes.stdout, process.stdout);
    const tail = ring;
    pipes.stderr.on('data', (chunk: Buffer) => tail.push(chunk));
    forward(pipes.stderr, process.stderr);
  }
  // The program and everything it starts, sampled, when the executor asked for it (usage-sink.ts).
  const sink = programUsageSinkOf(ctx);
  const meter = sink === undefined ? undefined : startMeter(group.pid);
  const onAbort = () => group.stop(t.killGraceMs ?? DEFAULT_KILL_GRACE_MS);
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  if (ctx.signal.aborted) onAbort();
  let code: number | null = null;
  let signal: NodeJS.Signals | null = null;
  let leftovers = true;
  try {
    ({ code, signal, leftovers } = await group.exited);
    // Piped output: everything the program wrote has been forwarded (its group is gone, so the pipes close).
    await drained;
  } finally {
    ctx.signal.removeEventListener('abort', onAbort);
    const used = await meter?.stop(!leftovers).catch(() => undefined);
    if (used !== undefined) sink?.({ ...used, exitCode: code, signal });
  }
  if (code === 0 || ctx.signal.aborted) return {};
  const tail = ring !== undefined ? ring.text() : await fileTail((logs as { stderr: string }).stderr, stderrFrom);
  const how = signal !== null ? `was killed by ${signal}` : `exited with code ${String(code)}`;
  const stderr = tail ? `\nstderr (last lines):\n${tail}` : ' It wrote nothing to stderr.';
  // A SIGTERM the runner did not send (it sends one only after aborting ctx.signal) is a spot
  // interruption or a scheduler's preemption, as is an exit code the step declared for it.
  if (signal === 'SIGTERM' || (code !== null && t.preemptionExitCodes?.includes(code) === true)) {
    const failure = new CairnError('CAIRN_PREEMPTED', `Step "${step}": ${t.program} ${how}: preempted; it is retried from preemptionRetries, resuming from its checkpoints.${stderr}`, { step, retryable: true });
    return { failure };
  }
  const failure = new CairnError('CAIRN_COMMAND_FAILED', `Step "${step}": ${t.program} ${how}.${stderr}`, { step });
  return { failure };
}

/** Copies `from` into `to` with backpressure (a fast writer waits; memory stays flat), leaving `to` open. */
function forward(from: Readable, to: NodeJS.WritableStream): void {
  from.pipe(to, { end: false });
}

/** Starts the program's group (at once, or a promise when it could not be started: then a typed error). */
function start(step: string, t: CommandTemplate, argv: readonly string[], env: NodeJS.ProcessEnv, output: StartOptions['output']): Group | Promise<Group> {
  // argv[0] is the program, or the environment's wrapper.
  const program = argv[0] as string;
  let started: Group | Promise<Group>;
  try {
    started = startGroup({ program, args: argv.slice(1), cwd: t.cwd, env, output });
  } catch (cause) {
    throw startError(step, t, program, env, cause);
  }
  return isPromise(started) ? started.catch((cause: unknown) => Promise.reject(startError(step, t, program, env, cause))) : started;
}

/** The typed error of a program that could not be started. */
function startError(step: string, t: CommandTemplate, program: string, env: NodeJS.ProcessEnv, cause: unknown): CairnError {
  const code = (cause as NodeJS.ErrnoException).code;
  if (code === 'ENOENT' || code === 'EACCES') {
    const cwdMissing = code === 'ENOENT' && !exists(t.cwd);
    if (cwdMissing) {
      return new CairnError('CAIRN_COMMAND_SOURCE', `Step "${step}": its project directory ${t.cwd} does not exist on this host; run it where the project is, or on an executor that stages its sources.`, { step, cause });
    }
    const where = program.includes('/') ? `at ${resolve(t.cwd, program)}` : `on PATH (${env.PATH ?? ''})`;
    return new CairnError('CAIRN_COMMAND_NOT_FOUND', `Step "${step}": cannot start ${JSON.stringify(program)}: ${code === 'EACCES' ? 'not executable' : 'not found'} ${where}; install it, fix the name, or give its path.`, { step, cause });
  }
  return new CairnError('CAIRN_COMMAND_FAILED', `Step "${step}": cannot start ${JSON.stringify(program)}: ${(cause as Error).message}.`, { step, cause, retryable: true });
}

/** Creates the step's checkpoint directory if a clean-up removed it; `CAIRN_CHECKPOINT` before the program starts when it cannot be. */
function ensureCheckpointDir(step: string, dir: string): void {
  try {
    mkdirSync(dir, { recursive: true });
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code ?? 'error';
    throw new CairnError('CAIRN_CHECKPOINT', `Step "${step}": its checkpoint directory ${dir} cannot be created (${code}: ${(cause as Error).message}); make the store writable, or choose another prefix.`, { step, cause });
  }
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * The result file's text; undefined when the program wrote none. Synchronous, as the context
 * file's write (scratch.ts): usually absent or a few bytes. Absence is found by a stat, not by
 * a read's ENOENT error, whose stack V8 would capture (bench row "local, 1 at a time").
 */
function readResultFile(resultPath: string): string | undefined {
  if (statSync(resultPath, { throwIfNoEntry: false }) === undefined) return undefined;
  try {
    return readFileSync(resultPath, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** The result the program reported in `text`; its metadata goes to the attempt's log. */
function reportedResult(step: string, program: string, text: string, ctx: StepContext): unknown {
  const reported = parseReportedResult(step, program, text);
  if (reported.metadata !== undefined) ctx.log.info(`metadata ${JSON.stringify(reported.metadata)}`);
  return reported.result;
}
