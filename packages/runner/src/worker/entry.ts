/**
 * The worker process entry, built to `dist/worker-entry.js` (see `workerEntryPath()`).
 * Used by the process executor and, on remote hosts, by the SSH and Slurm executors:
 *
 *   node dist/worker-entry.js --task <task.msgpack> --result <result.msgpack>
 *
 * - Reads the task (`encodeTask` bytes), runs it with {@link runTask}.
 * - Writes the result atomically (temp file + rename) as `packValue` bytes of a
 *   {@link WorkerResult}: `{ ok: true, result }` → exit 0; `{ ok: false, error: { name,
 *   message, stack, code } }` → exit 1.
 * - Bad usage, an unreadable or corrupt task, or an unwritable result path: a message on
 *   stderr, exit 2 (no result file).
 * - SIGTERM/SIGINT: aborts `ctx.signal`, gives the step up to 2 s to stop, writes
 *   `{ ok: false, error: { code: 'CAIRN_CANCELLED', … } }`, exit 143.
 * - `ctx.log` lines go to stdout (info) and stderr (warn, error) as `[step] LEVEL message`.
 * - With `CAIRN_PARENT_FD` (set by the process executor: one end of a pipe the runner holds) the
 *   worker learns at once when its runner dies, however it died: it aborts `ctx.signal`, gives the
 *   step half a second, and kills its own process group (the step's children too), writing no
 *   result. A killed runner leaves no orphan working on a step whose lease the next run takes
 *   over. Remote executors leave it unset, so their jobs survive a runner restart and are adopted.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { CairnError, decodeTask, type TaskPayload } from '@cairn/core';
import { encodeResult, failure, type WorkerResult } from './result.js';
import { watchParent } from './parent-watch.js';
import { killAllGroups } from '../command/process-group.js';
import { lineLogger, runTask } from './run-task.js';
import { takeSecretEnv } from './secret-env.js';
import { measureSelfIfAsked } from './self-usage.js';

/** How long a cancelled step may take to stop before the worker reports and exits. */
const CANCEL_GRACE_MS = 2000;
/** How long a step whose runner died may take to stop before its process group is killed. */
const ORPHAN_GRACE_MS = 500;

const EXIT_OK = 0;
const EXIT_FAILED = 1;
const EXIT_USAGE = 2;
const EXIT_CANCELLED = 143;

function usage(message: string): never {
  process.stderr.write(`cairn worker: ${message}\nusage: node worker-entry.js --task <task.msgpack> --result <result.msgpack>\n`);
  process.exit(EXIT_USAGE);
}

/** Writes the result atomically; returns whether it says `ok`. */
function writeResult(path: string, result: WorkerResult): boolean {
  const { bytes, ok } = encodeResult(result);
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, bytes);
    renameSync(tmp, path);
    return ok;
  } catch (err) {
    process.stderr.write(`cairn worker: cannot write the result to ${path}: ${(err as Error).message}\n`);
    process.exit(EXIT_USAGE);
  }
}

function readTask(path: string): TaskPayload {
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(path);
  } catch (err) {
    usage(`cannot read the task file ${path}: ${(err as Error).message}`);
  }
  try {
    return decodeTask(bytes);
  } catch (err) {
    usage(`${path}: ${(err as Error).message}`);
  }
}

async function main(argv: string[]): Promise<void> {
  let args: { task?: string | undefined; result?: string | undefined };
  try {
    args = parseArgs({ args: argv, options: { task: { type: 'string' }, result: { type: 'string' } }, strict: true }).values;
  } catch (err) {
    usage((err as Error).message);
  }
  if (!args.task || !args.result) usage('both --task and --result are required');
  const resultPath = args.result;
  const task = readTask(args.task);

  measureSelfIfAsked();
  const controller = new AbortController();
  const log = lineLogger(task.name, (level, line) => void (level === 'info' ? process.stdout : process.stderr).write(line));
  const run = runTask(task, { signal: controller.signal, log, secrets: takeSecretEnv() });

  let cancelling = false;
  const onSignal = (sig: NodeJS.Signals) => {
    if (cancelling) return;
    cancelling = true;
    const reason = new CairnError('CAIRN_CANCELLED', `Step "${task.name}" was cancelled (${sig}).`, { step: task.name });
    controller.abort(reason);
    const finish = () => {
      writeResult(resultPath, failure(reason));
      process.exit(EXIT_CANCELLED);
    };
    const timer = setTimeout(finish, CANCEL_GRACE_MS);
    run.then(finish, finish).finally(() => clearTimeout(timer));
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  watchParent(() => {
    if (cancelling) return;
    cancelling = true;
    controller.abort(new CairnError('CAIRN_CANCELLED', `Step "${task.name}": its runner died.`, { step: task.name }));
    const die = () => {
      // A command step's program runs in a process group of its own: it goes too.
      killAllGroups();
      try {
        process.kill(-process.pid, 'SIGKILL');
      } catch {
        // Not a process group leader (started by hand): this process at least.
      }
      process.exit(EXIT_CANCELLED);
    };
    setTimeout(die, ORPHAN_GRACE_MS).unref();
    run.then(die, die);
  });

  let outcome: WorkerResult;
  try {
    outcome = { ok: true, result: await run };
  } catch (err) {
    outcome = failure(err);
  }
  if (cancelling) return; // the signal handler reports
  const ok = writeResult(resultPath, outcome);
  // Exit explicitly: a step may leave timers or sockets open.
  process.exit(ok ? EXIT_OK : EXIT_FAILED);
}

void main(process.argv.slice(2));
