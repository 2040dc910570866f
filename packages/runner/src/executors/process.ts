/**
 * The `process` executor: runs each attempt in its own Node process
 * (`node dist/worker-entry.js --task … --result …`), detached in its own process group so
 * a cancel stops the step and everything it started. Each worker holds one end of a pipe whose
 * other end is the runner's: when the runner dies, however it dies, the worker stops within
 * half a second (worker/parent-watch.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { open, readFile, rm, writeFile } from 'node:fs/promises';
import { once } from 'node:events';
import type { Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { CairnError, encodeTask } from '@cairn/core';
import { secretEnv, withoutSecretEnv } from '../worker/secret-env.js';
import type { Executor, ExecutorCapabilities, ExecutorHost, JobStatus } from '../executor/contract.js';
import { assertBuilt, workerEntryPath } from '../worker/paths.js';
import { checkLocalExecutorOptions } from './local-options.js';
import { PARENT_FD_ENV } from '../worker/parent-watch.js';
import { decodeResult } from '../worker/result.js';
import { completeProcessUsage, PROCESS_USAGE_IMPORT, usageFile } from './usage.js';
import { startMeter } from '../usage/sampler.js';
import { abortReasonCode, cancelActive, cancelError, cancelledBy, localLogs, statusOf, type LocalJob } from './common.js';

/** Options of {@link createProcessExecutor}. */
export interface ProcessExecutorOptions {
  /** Extra arguments for `node` before the worker entry (e.g. `--max-old-space-size=8192`). @default [] */
  readonly nodeArgs?: readonly string[];
  /** Time between SIGTERM and SIGKILL to the job's process group on cancel. @default 2000 */
  readonly killGraceMs?: number;
  /** Environment added to the runner's own for each job. @default {} */
  readonly env?: Readonly<Record<string, string>>;
}

/** Bytes of stderr quoted when a worker dies without a result. */
const STDERR_TAIL_BYTES = 2048;

interface ProcJob extends LocalJob {
  readonly jobId: string;
  readonly child: ChildProcess;
  readonly pid: number;
  readonly resultPath: string;
  cancelReason?: unknown;
  timer?: NodeJS.Timeout;
  exited: Promise<void>;
}

/** Signals a whole process group; a group that is already gone is not an error. */
function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function readTail(path: string, bytes: number): Promise<string> {
  const handle = await open(path, 'r').catch(() => undefined);
  if (!handle) return '';
  try {
    const { size } = await handle.stat();
    const start = Math.max(0, size - bytes);
    const buf = Buffer.alloc(size - start);
    await handle.read(buf, 0, buf.length, start);
    return buf.toString('utf8').trim();
  } finally {
    await handle.close();
  }
}

/** The status a finished worker's result file means; `undefined` when there is none. */
async function readResultStatus(resultPath: string, step: string, cancelReason: unknown, exitCode: number | null): Promise<JobStatus | undefined> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(resultPath);
  } catch {
    return undefined;
  }
  return statusOf(decodeResult(bytes), step, cancelReason, exitCode);
}

/** The status of a job whose worker was stopped by a SIGTERM from outside the runner. */
function preempted(step: string, code: number | null): JobStatus {
  const error = new CairnError('CAIRN_PREEMPTED', `Step "${step}": its worker process received a SIGTERM the runner did not send (a spot interruption, a scheduler's preemption); retried from preemptionRetries.`, { step, retryable: true });
  return { state: 'failed', error, exitCode: code, reason: 'preempted', preempted: true };
}

/**
 * Creates the `process` executor. Completion is event-driven (`exit`); on exit the job's
 * process group is killed so nothing a step started outlives it.
 */
export function createProcessExecutor(options: ProcessExecutorOptions = {}): Executor {
  checkLocalExecutorOptions('process', options);
  const nodeArgs = options.nodeArgs ?? [];
  const graceMs = options.killGraceMs ?? 2000;
  const capabilities: ExecutorCapabilities = {
    remote: false,
    sharedFs: true,
    deploysCode: false,
    inProcess: false,
    cancel: 'reliable',
    logs: true,
    resumable: false,
    secrets: true,
  };
  let host: ExecutorHost | undefined;
  const active = new Map<string, ProcJob>();

  const requestCancel = (job: ProcJob, reason: unknown) => {
    if (job.cancelReason !== undefined) return;
    job.cancelReason = reason;
    signalGroup(job.pid, 'SIGTERM');
    job.timer = setTimeout(() => signalGroup(job.pid, 'SIGKILL'), graceMs);
  };

  const finish = async (job: ProcJob, code: number | null, signal: NodeJS.Signals | null): Promise<JobStatus> => {
    clearTimeout(job.timer);
    // Whatever the step started and left behind goes with it.
    signalGroup(job.pid, 'SIGKILL');
    const status = await readResultStatus(job.resultPath, job.step, job.cancelReason, code).catch((err: unknown): JobStatus => ({ state: 'failed', error: err, exitCode: code, reason: 'corrupt result' }));
    // The worker stopped on a SIGTERM the runner did not send (it sends one only to cancel): a spot
    // interruption or a scheduler's preemption, not a failure of the step.
    if (job.cancelReason === undefined && (status?.state === 'cancelled' || (status === undefined && signal === 'SIGTERM'))) return preempted(job.step, code);
    if (status) return status;
    if (job.cancelReason !== undefined) return { state: 'cancelled', exitCode: code, reason: abortReasonCode(job.cancelReason) };
    const how = signal ? `was killed by ${signal}` : `exited with code ${String(code)}`;
    const tail = await readTail(job.logPaths.stderr, STDERR_TAIL_BYTES);
    const error = new CairnError('CAIRN_EXECUTOR', `Step "${job.step}": its worker process ${how} without writing a result.${tail ? `\nstderr (tail):\n${tail}` : ''}`, { step: job.step });
    return { state: 'failed', error, exitCode: code, reason: signal ?? `exit code ${String(code)}` };
  };

  return {
    name: 'process',
    capabilities,

    async start(h) {
      host = h;
    },

    async submit(job) {
      if (!host) throw new CairnError('CAIRN_EXECUTOR', 'The "process" executor was not started; call start(host) before submit().');
      const h = host;
      const entryFile = workerEntryPath();
      assertBuilt(entryFile, 'process');
      // Checked and created on this stack, with no await between: once a cancel has been seen the
      // runner may commit or drop the staged directory at any moment, and a directory made here
      // after that would be re-created beside the output.
      if (job.signal.aborted) throw cancelError(job.signal.reason, job.task.name);
      mkdirSync(job.attemptDir, { recursive: true });
      mkdirSync(dirname(job.logPaths.stdout), { recursive: true });
      mkdirSync(dirname(job.logPaths.stderr), { recursive: true });
      const taskPath = join(job.attemptDir, 'task.msgpack');
      const resultPath = join(job.attemptDir, 'result.msgpack');
      await rm(resultPath, { force: true });
      await writeFile(taskPath, encodeTask(job.task));

      const out = openSync(job.logPaths.stdout, 'a');
      const err = openSync(job.logPaths.stderr, 'a');
      let child: ChildProcess;
      try {
        child = spawn(process.execPath, [...nodeArgs, PROCESS_USAGE_IMPORT, entryFile, '--task', taskPath, '--result', resultPath], {
          detached: true,
          // fd 3: the pipe that closes when this process dies (the worker watches it).
          stdio: ['ignore', out, err, 'pipe'],
          env: { ...withoutSecretEnv(process.env), CAIRN_USAGE_FILE: usageFile(job.attemptDir), ...options.env, ...secretEnv(job.secrets), [PARENT_FD_ENV]: '3' },
        });
      } finally {
        closeSync(out);
        closeSync(err);
      }
      try {
        await once(child, 'spawn');
      } catch (cause) {
        throw new CairnError('CAIRN_EXECUTOR', `Step "${job.task.name}": cannot start a worker process (${(cause as Error).message}).`, { step: job.task.name, cause });
      }
      const pid = child.pid as number;
      // Our end of the pipe must not keep the runner alive, and must stay open while the worker runs.
      const lifeline = child.stdio[3] as Socket | null;
      lifeline?.unref();
      // The worker and everything it starts (its process group and descendants), sampled until it exits.
      const meter = startMeter(pid);
      const entry: ProcJob = { jobId: job.jobKey, step: job.task.name, child, pid, resultPath, logPaths: job.logPaths, exited: Promise.resolve() };
      const onAbort = () => requestCancel(entry, job.signal.reason);
      entry.exited = once(child, 'exit').then(async ([code, signal]) => {
        const tree = await meter.stop().catch(() => undefined);
        completeProcessUsage(job.attemptDir, code as number | null, signal as string | null, tree);
        const status = await finish(entry, code as number | null, signal as NodeJS.Signals | null);
        job.signal.removeEventListener('abort', onAbort);
        lifeline?.destroy();
        active.delete(entry.jobId);
        h.report(entry.jobId, status);
      }).catch((e: unknown) => h.logger.error(`process: reporting job ${entry.jobId} failed: ${String(e)}`));
      active.set(entry.jobId, entry);
      job.signal.addEventListener('abort', onAbort, { once: true });
      if (job.signal.aborted) onAbort();
      return { jobId: entry.jobId, executor: 'process', info: { pid, attemptDir: job.attemptDir, resultPath, logPaths: job.logPaths } };
    },

    async poll(handles) {
      const out = new Map<string, JobStatus>();
      for (const h of handles) {
        if (active.has(h.jobId)) {
          out.set(h.jobId, { state: 'running' });
          continue;
        }
        const resultPath = h.info.resultPath as string | undefined;
        const pid = h.info.pid as number | undefined;
        const fromFile = resultPath ? await readResultStatus(resultPath, h.jobId, undefined, null).catch(() => undefined) : undefined;
        if (fromFile) out.set(h.jobId, fromFile);
        else if (pid !== undefined && isAlive(pid)) out.set(h.jobId, { state: 'running' });
        else out.set(h.jobId, { state: 'lost', reason: 'worker process gone without a result', infrastructure: true });
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
      for (const job of jobs) requestCancel(job, cancelledBy(job, 'stop'));
      await Promise.all(jobs.map((j) => j.exited));
      for (const job of jobs) job.child.unref();
    },
  };
}
