/**
 * The pack worker, built to `dist/pack-worker.js`: runs the steps of one task of a packed job,
 * one after another in one Node process, on a compute node.
 *
 *   node dist/pack-worker.js --pack <pack dir> --task <k>
 *
 * For each step of `task-<k>.steps` not yet in `task-<k>.done`: writes `task-<k>.current`, the
 * step's begin marker, runs the step with `runTask` (its `ctx.log` lines and everything the
 * process writes to stdout/stderr go to the step's own log files), writes its result and its
 * exit-code file (`0 -` or `1 -`, as the runner's worker would exit), and appends it to the done
 * list. Per step, as for a job of its own:
 * - its time limit: at `resources.timeLimit` the step is stopped and recorded `143 USR2` (TIMEOUT);
 * - a cancel (`cancel-<k>-<index>` in the pack directory, written by the executor) stops it, or
 *   skips it if it has not started;
 * - a step that ignores its abort signal for {@link GRACE_MS} is abandoned: its files are
 *   written and the worker exits {@link RESTART_EXIT}, and the wrapper starts a new one.
 * `USR2`/`TERM`/`INT` (forwarded by the wrapper: walltime warning, cancel of the whole task)
 * stop the running step with that signal recorded and mark every later step `unstarted`.
 * If the process dies inside a step (`process.exit`, a crash), the wrapper records that step's
 * exit code and starts a new worker for the rest.
 */
import { appendFileSync, closeSync, existsSync, openSync, readFileSync, renameSync, writeFileSync, writeSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { CairnError, decodeTask, type CairnErrorCode } from '@cairn/core';
import { formatExitFile, jobFiles, packFiles, type ExitRecord } from './files.js';
import { encodeResult, failure, lineLogger, runTask, takeSecretsFile, type WorkerResult } from './runner-api.js';
import { RESTART_EXIT } from './wrapper.js';
import { measurePackStep, type PackStepUsage } from './pack-usage.js';

/** How long a stopped step may take to return before it is abandoned. */
const GRACE_MS = 2000;
/** How often a running step's cancel file is looked for. */
const CANCEL_POLL_MS = 250;
const EXIT_STOPPED = 143;

interface StepLine {
  readonly dir: string;
  readonly stdout: string;
  readonly stderr: string;
  readonly limitSeconds: number | undefined;
}

function die(message: string): never {
  process.stderr.write(`cairn pack worker: ${message}\nusage: node pack-worker.js --pack <dir> --task <k>\n`);
  process.exit(2);
}

function atomic(path: string, data: string | Uint8Array): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, data);
  renameSync(tmp, path);
}

function readLines(path: string): string[] {
  try {
    return readFileSync(path, 'utf8').split('\n').filter((l) => l !== '');
  } catch {
    return [];
  }
}

/** Output of the running step goes to its own log files; between steps, to the task's log. */
let route: { out: number; err: number } | null = null;
function redirect(stream: NodeJS.WriteStream, pick: (r: { out: number; err: number }) => number): void {
  const original = stream.write.bind(stream);
  stream.write = ((chunk: string | Uint8Array, encoding?: unknown, cb?: unknown): boolean => {
    if (route === null) return original(chunk as string, encoding as BufferEncoding, cb as () => void);
    if (typeof chunk === 'string') writeSync(pick(route), chunk);
    else writeSync(pick(route), chunk);
    const done = typeof encoding === 'function' ? encoding : cb;
    if (typeof done === 'function') (done as () => void)();
    return true;
  }) as typeof stream.write;
}

async function main(argv: string[]): Promise<void> {
  let args: { pack?: string | undefined; task?: string | undefined };
  try {
    args = parseArgs({ args: argv, options: { pack: { type: 'string' }, task: { type: 'string' } }, strict: true }).values;
  } catch (err) {
    die((err as Error).message);
  }
  const k = Number(args.task);
  if (!args.pack || !Number.isInteger(k) || k < 1) die('--pack and a positive --task are required');
  const pack = packFiles(args.pack);
  const steps: StepLine[] = readLines(pack.manifest(k)).map((line) => {
    const [dir, stdout, stderr, limit] = line.split('\t');
    if (!dir || !stdout || !stderr) die(`${pack.manifest(k)}: malformed line ${JSON.stringify(line)}`);
    return { dir, stdout, stderr, limitSeconds: limit && limit !== '-' ? Number(limit) : undefined };
  });
  if (steps.length === 0) die(`${pack.manifest(k)} lists no steps`);
  const done = new Set(readLines(pack.done(k)).map(Number));
  /** Writes step i's result and exit-code file (signal null: `0`, or `1` for a failure, as the runner's worker exits). */
  const finish = (i: number, signal: string | null, result?: WorkerResult, exit?: Partial<ExitRecord>): void => {
    const files = jobFiles((steps[i] as StepLine).dir);
    try {
      const encoded = result ? encodeResult(result) : undefined;
      if (encoded) atomic(files.result, encoded.bytes);
      const code = signal !== null ? EXIT_STOPPED : encoded?.ok ? 0 : 1;
      atomic(files.exit, formatExitFile({ code, signal, ...exit }));
    } catch (err) {
      // The attempt directory is gone (the runner gave the attempt up): nothing to report to.
      process.stderr.write(`cairn pack worker: cannot write the files of ${files.dir}: ${(err as Error).message}\n`);
    }
    done.add(i);
    try {
      appendFileSync(pack.done(k), `${i}\n`);
    } catch (err) {
      // The pack directory is gone (its executor cleaned up after the last report): nothing left to resume.
      process.stderr.write(`cairn pack worker: cannot record step ${i} as done: ${(err as Error).message}\n`);
    }
  };

  redirect(process.stdout, (r) => r.out);
  redirect(process.stderr, (r) => r.err);

  // A signal from the wrapper stops the running step (with that signal recorded) and the task.
  let stopping: string | null = null;
  let current: { abort: (code: CairnErrorCode, why: string, signal: string) => void } | null = null;
  const markRest = (from: number, signal: string): void => {
    for (let i = from; i < steps.length; i++) {
      if (!done.has(i)) finish(i, signal, undefined, { unstarted: true });
    }
  };
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGUSR2'] as const) {
    process.on(sig, () => {
      if (stopping !== null) return;
      stopping = sig.slice(3);
      current?.abort('CAIRN_CANCELLED', `its task was stopped (${sig})`, stopping);
    });
  }

  for (let i = 0; i < steps.length; i++) {
    if (done.has(i)) continue;
    if (stopping !== null) {
      markRest(i, stopping);
      process.exit(EXIT_STOPPED);
    }
    const step = steps[i] as StepLine;
    const files = jobFiles(step.dir);
    atomic(pack.current(k), `${i}\t${step.dir}\n`);
    if (existsSync(pack.cancel(k, i))) {
      const reason = new CairnError('CAIRN_CANCELLED', 'The step was cancelled before it started.');
      finish(i, 'TERM', failure(reason), { unstarted: true });
      continue;
    }
    if (!existsSync(files.task)) {
      // Its attempt directory is gone: the runner gave the attempt up. Do not recreate anything.
      finish(i, null, undefined, { code: 2 });
      continue;
    }
    const outcome = await runStep(i, step, files, pack.cancel(k, i), (c) => (current = c));
    current = null;
    finish(i, outcome.signal, outcome.result, outcome.code !== undefined ? { code: outcome.code } : undefined);
    if (outcome.abandoned) {
      if (stopping !== null) markRest(i + 1, stopping);
      process.exit(stopping !== null ? EXIT_STOPPED : RESTART_EXIT);
    }
  }
  if (stopping !== null) process.exit(EXIT_STOPPED);
  process.exit(0);
}

/** Runs one step; resolves with what to record (never rejects). */
async function runStep(
  i: number,
  step: StepLine,
  files: ReturnType<typeof jobFiles>,
  cancelFile: string,
  setCurrent: (c: { abort: (code: CairnErrorCode, why: string, signal: string) => void }) => void,
): Promise<{ signal: string | null; result: WorkerResult; abandoned: boolean; code?: number }> {
  atomic(files.begin, `${Math.floor(Date.now() / 1000)}\n`);
  const out = openSync(step.stdout, 'a');
  const err = openSync(step.stderr, 'a');
  route = { out, err };
  const controller = new AbortController();
  let stopped: { signal: string; reason: CairnError } | null = null;
  let abandon: (() => void) | undefined;
  const abandoned = new Promise<'abandoned'>((resolve) => (abandon = () => resolve('abandoned')));
  const timers: NodeJS.Timeout[] = [];
  let name = `step ${i + 1}`;
  const abort = (code: CairnErrorCode, why: string, signal: string): void => {
    if (stopped !== null) return;
    stopped = { signal, reason: new CairnError(code, `Step "${name}" ${why}.`, { step: name }) };
    controller.abort(stopped.reason);
    timers.push(setTimeout(() => abandon?.(), GRACE_MS));
  };
  setCurrent({ abort });
  let usage: PackStepUsage | undefined;
  let exitCode: number | undefined;
  try {
    let task;
    try {
      task = decodeTask(readFileSync(files.task));
    } catch (e) {
      process.stderr.write(`cairn pack worker: ${files.task}: ${(e as Error).message}\n`);
      return { signal: null, result: failure(e), abandoned: false, code: 2 };
    }
    name = task.name;
    usage = measurePackStep();
    if (step.limitSeconds !== undefined) {
      timers.push(setTimeout(() => abort('CAIRN_TIMEOUT', `exceeded its time limit of ${step.limitSeconds} s`, 'USR2'), step.limitSeconds * 1000));
    }
    const watch = setInterval(() => {
      if (existsSync(cancelFile)) abort('CAIRN_CANCELLED', 'was cancelled', 'TERM');
    }, CANCEL_POLL_MS);
    timers.push(watch);
    const log = lineLogger(task.name, (level, line) => void (level === 'info' ? process.stdout : process.stderr).write(line));
    // A command step's program writes straight into the step's log files (its stderr tail is read back from there).
    // The step's secrets: read from its 0600 file, which is deleted before the step starts.
    const secrets = takeSecretsFile(files.secrets);
    const run = runTask(task, { signal: controller.signal, log, logPaths: { stdout: step.stdout, stderr: step.stderr }, secrets }).then(
      (value): WorkerResult => ({ ok: true, result: value }),
      (e: unknown): WorkerResult => failure(e),
    );
    const outcome = await Promise.race([run, abandoned]);
    const s = stopped as { signal: string; reason: CairnError } | null;
    exitCode = s !== null ? EXIT_STOPPED : (outcome as WorkerResult).ok ? 0 : 1;
    if (s !== null) return { signal: s.signal, result: failure(s.reason), abandoned: outcome === 'abandoned' };
    return { signal: null, result: outcome as WorkerResult, abandoned: false };
  } finally {
    for (const t of timers) clearTimeout(t);
    usage?.finish(files.dir, exitCode);
    route = null;
    closeSync(out);
    closeSync(err);
  }
}

void main(process.argv.slice(2));
