/**
 * A step thread of the persistent worker. Runs one step at a time and is reused for the next
 * one (so a module imported by an earlier step stays cached). Its `process.env` is its own copy:
 * each step sets `CUDA_VISIBLE_DEVICES` and `CAIRN_JOB_DIR` (the marker by which cancel finds
 * the step's subprocesses). `console` and `process.stdout/stderr` writes are appended to the
 * step's log files; `process.exit(n)` ends only this thread (the worker records exit code n).
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { getHeapStatistics } from 'node:v8';
import { parentPort } from 'node:worker_threads';
import { CairnError, decodeTask } from '@cairn/core';
import { encodeResult, failure, lineLogger, runTask } from '@cairn/runner/worker';
import type { FromThread, ToThread } from './protocol.js';

type Write = (chunk: unknown, encoding?: unknown, cb?: unknown) => boolean;

/** Where writes go while a step runs; `undefined` between steps (stray output goes to the worker log). */
let logs: { stdout: string; stderr: string } | undefined;

function redirect(stream: NodeJS.WriteStream, which: 'stdout' | 'stderr'): void {
  const original = stream.write.bind(stream) as Write;
  (stream as unknown as { write: Write }).write = (chunk, encoding, cb) => {
    const done = typeof encoding === 'function' ? encoding : cb;
    if (!logs) return original(chunk, encoding, cb);
    try {
      appendFileSync(logs[which], typeof chunk === 'string' ? chunk : (chunk as Uint8Array));
    } catch {
      // The job dir is gone (cleaned up); the line is dropped.
    }
    if (typeof done === 'function') (done as () => void)();
    return true;
  };
}

/** CPU time this thread has used (ms), where Linux tells; undefined elsewhere. */
function threadCpuMs(): number | undefined {
  try {
    const ns = Number(readFileSync('/proc/thread-self/schedstat', 'latin1').split(' ')[0]);
    return Number.isFinite(ns) ? ns / 1e6 : undefined;
  } catch {
    return undefined;
  }
}

/** Entry of a step thread. */
export function runThread(): void {
  const port = parentPort;
  if (!port) throw new Error('ssh-worker thread: no parent port');
  redirect(process.stdout, 'stdout');
  redirect(process.stderr, 'stderr');
  let controller: AbortController | undefined;
  port.on('message', (msg: ToThread) => {
    if (msg.t === 'abort') {
      controller?.abort(new CairnError('CAIRN_CANCELLED', msg.message));
      return;
    }
    controller = new AbortController();
    const signal = controller.signal;
    logs = { stdout: msg.stdout, stderr: msg.stderr };
    process.env.CUDA_VISIBLE_DEVICES = msg.cuda;
    process.env.CAIRN_JOB_DIR = msg.dir;
    const cpuStart = threadCpuMs();
    void (async () => {
      let outcome: { ok: true; result: unknown } | { ok: false; error: unknown };
      try {
        const task = decodeTask(msg.task);
        const log = lineLogger(task.name, (level, text) => void (level === 'info' ? process.stdout : process.stderr).write(text));
        outcome = { ok: true, result: await runTask(task, { signal, log, secrets: msg.secrets }) };
      } catch (error) {
        outcome = { ok: false, error };
      }
      // A step that returned after its signal aborted was cancelled: report it as such.
      if (signal.aborted) outcome = { ok: false, error: signal.reason };
      logs = undefined;
      delete process.env.CAIRN_JOB_DIR;
      const { bytes, ok } = encodeResult(outcome.ok ? { ok: true, result: outcome.result } : failure(outcome.error));
      const cpuEnd = threadCpuMs();
      const cpuMs = cpuStart !== undefined && cpuEnd !== undefined ? Math.round(cpuEnd - cpuStart) : undefined;
      const reply: FromThread = { t: 'done', result: bytes, ok, ...(cpuMs !== undefined ? { cpuMs } : {}), heapBytes: getHeapStatistics().total_heap_size };
      port.postMessage(reply);
    })();
  });
}
