/**
 * The `threads` executor: runs steps in a worker-thread pool (tinypool). Each attempt is
 * decoded and run by `dist/thread-job.js` (thread-job.ts, around worker/thread-worker.ts); the
 * step function is re-imported by module + export inside the thread. The processes an attempt
 * starts carry its mark and are stopped with it (marked-processes.ts): SIGTERM on cancel,
 * SIGKILL to whatever is left when the attempt ends, as the `process` executor does to its group.
 */
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { CairnError, encodeTask } from '@cairn/core';
import type { Tinypool } from 'tinypool';
import type { Executor, ExecutorCapabilities, ExecutorHost, JobStatus } from '../executor/contract.js';
import { assertBuilt, threadWorkerPath } from '../worker/paths.js';
import { decodeResult, errorData } from '../worker/result.js';
import type { ThreadJobMessage } from './thread-job.js';
import { markedProcesses, newChildMark, signalMarked } from './marked-processes.js';
import { startMeter } from '../usage/sampler.js';
import { addChildUsage } from './usage.js';
import { abortReasonCode, cancelActive, cancelError, cancelledBy, ensureLogDirs, localLogs, statusOf, type LocalJob } from './common.js';
import { checkLocalExecutorOptions } from './local-options.js';
import { isCommandTask, runCommandInMainThread } from '../command/main-thread.js';

/** Options of {@link createThreadsExecutor}. */
export interface ThreadsExecutorOptions {
  /** Most threads (and so most jobs) at once. @default os.availableParallelism() */
  readonly maxThreads?: number;
  /** Threads kept alive while idle. @default 0 */
  readonly minThreads?: number;
  /** How long a cancelled step may take to stop by itself before its thread is terminated. @default 2000 */
  readonly cancelGraceMs?: number;
  /** Node flags of the pool's threads. @default `process.execArgv` without `--conditions`/`-C` flags */
  readonly execArgv?: readonly string[];
}

/**
 * The runner's Node flags minus custom export conditions: the pool worker is built code and
 * must resolve packages the default way (under vitest, `@cairn/source` would point it at
 * TypeScript sources Node cannot load).
 */
function inheritedExecArgv(): string[] {
  const out: string[] = [];
  const argv = process.execArgv;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === '--conditions' || a === '-C') i++;
    else if (!a.startsWith('--conditions=') && !a.startsWith('-C=')) out.push(a);
  }
  return out;
}

interface ThreadJob extends LocalJob {
  readonly jobId: string;
  /** Tells the step (`ctx.signal`) to stop. */
  readonly port: MessagePort;
  /** Aborting it makes tinypool terminate the thread. */
  readonly terminate: AbortController;
  /** The mark of the processes the attempt starts. */
  readonly childMark: string;
  /** Element 0: how many processes the attempt started (shared with its thread). */
  readonly spawned: Int32Array;
  cancelReason?: unknown;
  timer?: NodeJS.Timeout;
  settled: Promise<void>;
}

/**
 * Creates the `threads` executor. Cancellation first aborts the step's `ctx.signal` and sends
 * SIGTERM to the processes the step started, then terminates its thread after `cancelGraceMs`;
 * when the attempt ends, whatever it started and left running is killed. A step stuck in native
 * code may not stop, and a process that escapes its mark is not found (marked-processes.ts),
 * hence `cancel: 'best-effort'`.
 */
export function createThreadsExecutor(options: ThreadsExecutorOptions = {}): Executor {
  checkLocalExecutorOptions('threads', options);
  const maxThreads = options.maxThreads ?? availableParallelism();
  const minThreads = Math.min(options.minThreads ?? 0, maxThreads);
  const graceMs = options.cancelGraceMs ?? 2000;
  const capabilities: ExecutorCapabilities = {
    remote: false,
    sharedFs: true,
    deploysCode: false,
    inProcess: false,
    cancel: 'best-effort',
    logs: true,
    resumable: false,
    secrets: true,
    maxConcurrency: maxThreads,
  };
  let host: ExecutorHost | undefined;
  let pool: Tinypool | undefined;
  const active = new Map<string, ThreadJob>();

  const requestCancel = (job: ThreadJob, reason: unknown) => {
    if (job.cancelReason !== undefined) return;
    job.cancelReason = reason;
    job.port.postMessage(errorData(cancelError(reason, job.step)));
    if (Atomics.load(job.spawned, 0) > 0) void signalMarked(job.childMark, 'SIGTERM');
    job.timer = setTimeout(() => job.terminate.abort(), graceMs);
  };

  return {
    name: 'threads',
    capabilities,

    async start(h) {
      host = h;
      if (pool) return;
      const file = join(dirname(threadWorkerPath()), 'thread-job.js');
      assertBuilt(file, 'threads');
      // Loaded on start so the CJS build works without require()-ing an ESM-only package.
      const { Tinypool } = await import('tinypool');
      pool = new Tinypool({ filename: file, minThreads, maxThreads, runtime: 'worker_threads', execArgv: [...(options.execArgv ?? inheritedExecArgv())] });
    },

    async submit(job) {
      if (!pool || !host) throw new CairnError('CAIRN_EXECUTOR', 'The "threads" executor was not started; call start(host) before submit().');
      const h = host;
      const report = h.report.bind(h);
      // On this stack, with no await before it: see the process executor's submit.
      if (job.signal.aborted) throw cancelError(job.signal.reason, job.task.name);
      ensureLogDirs(job.logPaths);
      const { port1, port2 } = new MessageChannel();
      const spawned = new Int32Array(new SharedArrayBuffer(4));
      const childMark = newChildMark();
      const message: ThreadJobMessage = { task: encodeTask(job.task), logPaths: job.logPaths, port: port2, attemptDir: job.attemptDir, childMark, spawned, secrets: job.secrets };
      const entry: ThreadJob = { jobId: job.jobKey, step: job.task.name, logPaths: job.logPaths, port: port1, terminate: new AbortController(), childMark, spawned, settled: Promise.resolve() };
      const onAbort = () => requestCancel(entry, job.signal.reason);
      // A command step runs its program from this thread (command/main-thread.ts says why).
      // The processes a function step starts (found by their mark), sampled once it has started any.
      const command = isCommandTask(job.task);
      const meter = command ? undefined : startMeter(() => markedProcesses(childMark), () => Atomics.load(spawned, 0) > 0);
      const running = command ? runCommandInMainThread(message, entry.terminate.signal) : pool.run(message, { transferList: [port2], signal: entry.terminate.signal });
      entry.settled = running
        .then(
          (bytes: Uint8Array): JobStatus => statusOf(decodeResult(bytes), entry.step, entry.cancelReason),
          (err: unknown): JobStatus =>
            entry.cancelReason !== undefined
              ? { state: 'cancelled', reason: abortReasonCode(entry.cancelReason) }
              : { state: 'failed', error: err, reason: 'thread crashed', infrastructure: true },
        )
        .then(async (status) => {
          clearTimeout(entry.timer);
          const children = await meter?.stop().catch(() => undefined);
          if (children?.cpuMs !== undefined) addChildUsage(job.attemptDir, children);
          // Whatever the step started and left behind goes with it.
          if (Atomics.load(entry.spawned, 0) > 0) await signalMarked(entry.childMark, 'SIGKILL');
          job.signal.removeEventListener('abort', onAbort);
          port1.close();
          active.delete(entry.jobId);
          report(entry.jobId, status);
        })
        .catch((err: unknown) => h.logger.error(`threads: reporting job ${entry.jobId} failed: ${String(err)}`));
      active.set(entry.jobId, entry);
      job.signal.addEventListener('abort', onAbort, { once: true });
      if (job.signal.aborted) onAbort();
      return { jobId: entry.jobId, executor: 'threads', info: { logPaths: job.logPaths } };
    },

    async poll(handles) {
      const out = new Map<string, JobStatus>();
      for (const h of handles) {
        out.set(h.jobId, active.has(h.jobId) ? { state: 'running' } : { state: 'lost', reason: 'not running in this process', infrastructure: true });
      }
      return out;
    },

    async cancel(handles) {
      cancelActive(active, handles, requestCancel);
    },

    logs(handle, opts) {
      return localLogs(handle, opts, active);
    },

    async stop() {
      const jobs = [...active.values()];
      for (const job of jobs) {
        job.cancelReason ??= cancelledBy(job, 'stop');
        job.terminate.abort();
      }
      await Promise.all(jobs.map((j) => j.settled));
      const p = pool;
      pool = undefined;
      await p?.destroy();
    },
  };
}
