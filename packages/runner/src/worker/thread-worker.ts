/**
 * The threads executor's pool worker, built to `dist/thread-worker.js` (see
 * `threadWorkerPath()`). Tinypool calls the default export once per attempt.
 */
import { appendFileSync } from 'node:fs';
import { getHeapStatistics } from 'node:v8';
import type { MessagePort } from 'node:worker_threads';
import { decodeTask } from '@cairn/core';
import { setThreadOutput } from '../executors/stdio-capture.js';
import { maskedLogWriter } from '../secrets/masked-writer.js';
import { threadCpuMs, writeUsage } from '../executors/usage.js';
import { encodeResult, failure, rebuildError, type WorkerErrorData, type WorkerResult } from './result.js';
import { lineLogger, runTask } from './run-task.js';
import { isTypeScriptModule, registerModuleLoaders } from './user-modules.js';

/** What the threads executor sends for one attempt. */
export interface ThreadTaskMessage {
  /** `encodeTask` bytes. */
  readonly task: Uint8Array;
  /** Files the step's `ctx.log` lines and its stdout/stderr writes are appended to. */
  readonly logPaths: { readonly stdout: string; readonly stderr: string };
  /** Receives one message, the abort reason as {@link WorkerErrorData}, when the step must stop. */
  readonly port: MessagePort;
  /** The attempt's directory: its CPU time and heap size are written there (`usage.json`). */
  readonly attemptDir: string;
  /** The step's secret values (in memory only: the message is never written anywhere). */
  readonly secrets?: Readonly<Record<string, string>> | undefined;
}

/** Runs one attempt; resolves with `encodeResult` bytes (never rejects for a step error). */
export default async function runThreadTask(msg: ThreadTaskMessage): Promise<Uint8Array> {
  const controller = new AbortController();
  msg.port.once('message', (reason: WorkerErrorData) => controller.abort(rebuildError(reason)));
  let outcome: WorkerResult;
  // The thread runs one attempt at a time: whatever it writes meanwhile is this step's output,
  // masked on write (synchronous appends: the thread may be terminated at any moment).
  const out = maskedLogWriter(msg.secrets, (stream, bytes) => appendFileSync(msg.logPaths[stream], bytes));
  setThreadOutput(out);
  const cpuStart = threadCpuMs();
  const wallStart = Date.now();
  try {
    const task = decodeTask(msg.task);
    const log = lineLogger(task.name, (level, line) => out.write(level === 'info' ? 'stdout' : 'stderr', line));
    // A TypeScript step module needs tsx in this thread too (module hooks are per thread).
    if (isTypeScriptModule(task.ref.module)) await registerModuleLoaders([task.ref.module]);
    outcome = { ok: true, result: await runTask(task, { signal: controller.signal, log, logPaths: msg.logPaths, secrets: msg.secrets }) };
  } catch (err) {
    outcome = failure(err);
  } finally {
    try {
      out.end();
    } catch {
      // A log that cannot be written must not fail the step.
    }
    setThreadOutput(undefined);
    msg.port.close();
    const cpuEnd = threadCpuMs();
    const cpu = cpuStart !== undefined && cpuEnd !== undefined ? { cpuMs: cpuEnd - cpuStart, cpuScope: 'thread' as const } : {};
    writeUsage(msg.attemptDir, { executor: 'threads', wallMs: Date.now() - wallStart, ...cpu, peakMemoryBytes: getHeapStatistics().total_heap_size, memoryKind: 'heap' });
  }
  return encodeResult(outcome).bytes;
}
