/**
 * The `threads` executor runs a command step here, in the runner's main thread, not in a pool
 * thread: the step is a child process and needs no thread of its own, and a pool thread can be
 * terminated at any moment (the cancel grace ran out, the executor stopped), leaving the
 * program it started running with nobody to stop it. The main thread outlives every attempt.
 * Takes the pool worker's message and returns the same result bytes, so the executor treats
 * both paths alike.
 */
import { appendFileSync } from 'node:fs';
import { COMMAND_MODULE, decodeTask, type TaskPayload } from '@cairn/core';
import type { ProgramUsage } from './usage-sink.js';
import type { ThreadTaskMessage } from '../worker/thread-worker.js';
import { encodeResult, failure, rebuildError, type WorkerErrorData, type WorkerResult } from '../worker/result.js';
import { lineLogger, runTask } from '../worker/run-task.js';
import { writeUsage } from '../executors/usage.js';
import { programUsageFields } from './program-usage.js';
import { maskText } from '../secrets/mask.js';

/** True when `task` is a command step's (the reserved `cairn:command` function). */
export function isCommandTask(task: TaskPayload): boolean {
  return task.ref.module === COMMAND_MODULE;
}

/**
 * Runs one attempt of a command step in this thread. `msg.port` delivers the cancel reason, as
 * to a pool thread; `terminate` aborting (where a pool thread would be killed) stops the program
 * too, within its kill grace. Never rejects for a step error.
 */
export async function runCommandInMainThread(msg: ThreadTaskMessage, terminate: AbortSignal): Promise<Uint8Array> {
  const controller = new AbortController();
  msg.port.once('message', (reason: WorkerErrorData) => controller.abort(rebuildError(reason)));
  const onTerminate = () => controller.abort(terminate.reason);
  terminate.addEventListener('abort', onTerminate, { once: true });
  let outcome: WorkerResult;
  try {
    const task = decodeTask(msg.task);
    // The runner's own lines about the program, each whole and masked on write (the program writes its own fds).
    const values = Object.values(msg.secrets ?? {});
    const log = lineLogger(task.name, (level, line) => appendFileSync(level === 'info' ? msg.logPaths.stdout : msg.logPaths.stderr, maskText(line, values)));
    // The program's process tree is sampled (this thread is the runner's: its own numbers are not the step's).
    const programUsage = (used: ProgramUsage) => writeUsage(msg.attemptDir, programUsageFields('threads', used));
    outcome = { ok: true, result: await runTask(task, { signal: controller.signal, log, logPaths: msg.logPaths, programUsage, secrets: msg.secrets }) };
  } catch (err) {
    outcome = failure(err);
  } finally {
    terminate.removeEventListener('abort', onTerminate);
    msg.port.close();
  }
  return encodeResult(outcome).bytes;
}
