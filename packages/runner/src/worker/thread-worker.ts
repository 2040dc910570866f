/**
 * The threads executor's pool worker, built to `dist/thread-worker.js` (see
 * `threadWorkerPath()`). Tinypool calls the default export once per attempt.
 */
import { appendFileSync } from 'node:fs';
import type { MessagePort } from 'node:worker_threads';
import { decodeTask } from '@cairn/core';
import { encodeResult, failure, rebuildError, type WorkerErrorData, type WorkerResult } from './result.js';
import { lineLogger, runTask } from './run-task.js';

/** What the threads executor sends for one attempt. */
export interface ThreadTaskMessage {
  /** `encodeTask` bytes. */
  readonly task: Uint8Array;
  /** Files the step's `ctx.log` lines are appended to. */
  readonly logPaths: { readonly stdout: string; readonly stderr: string };
  /** Receives one message, the abort reason as {@link WorkerErrorData}, when the step must stop. */
  readonly port: MessagePort;
}

/** Runs one attempt; resolves with `encodeResult` bytes (never rejects for a step error). */
export default async function runThreadTask(msg: ThreadTaskMessage): Promise<Uint8Array> {
  const controller = new AbortController();
  msg.port.once('message', (reason: WorkerErrorData) => controller.abort(rebuildError(reason)));
  let outcome: WorkerResult;
  try {
    const task = decodeTask(msg.task);
    const log = lineLogger(task.name, (level, line) => appendFileSync(level === 'info' ? msg.logPaths.stdout : msg.logPaths.stderr, line));
    outcome = { ok: true, result: await runTask(task, { signal: controller.signal, log }) };
  } catch (err) {
    outcome = failure(err);
  } finally {
    msg.port.close();
  }
  return encodeResult(outcome).bytes;
}
