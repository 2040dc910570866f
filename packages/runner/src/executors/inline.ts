/**
 * The `inline` executor: runs `spec.fn(outputPath, ctx)` in the runner's own process. The only
 * executor that can run inline closures. Cancellation aborts `ctx.signal` (best effort: a
 * step that ignores it keeps running in the background after the runner gives up on it).
 */
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { dirname } from 'node:path';
import { CairnError, type StepContext, type StepLogger } from '@cairn/core';
import type { Executor, ExecutorCapabilities, ExecutorHost, JobRequest, JobStatus } from '../executor.js';

const capabilities: ExecutorCapabilities = Object.freeze({
  remote: false,
  sharedFs: true,
  deploysCode: false,
  inProcess: true,
  cancel: 'best-effort',
  logs: true,
  resumable: false,
});

/** A logger that opens the attempt's log files on first use (most steps never log). */
function attemptLogger(job: JobRequest): { log: StepLogger; close(): Promise<void> | undefined } {
  const streams: { out?: WriteStream; err?: WriteStream } = {};
  const open = (which: 'out' | 'err'): WriteStream | undefined => {
    if (streams[which]) return streams[which];
    const file = which === 'out' ? job.logPaths.stdout : job.logPaths.stderr;
    try {
      mkdirSync(dirname(file), { recursive: true });
      streams[which] = createWriteStream(file, { flags: 'a' });
      streams[which].on('error', () => undefined);
    } catch {
      return undefined;
    }
    return streams[which];
  };
  const line = (which: 'out' | 'err', level: string) => (message: string) => {
    open(which)?.write(`${new Date().toISOString()} ${level} ${message}\n`);
  };
  return {
    log: { info: line('out', 'INFO'), warn: line('err', 'WARN'), error: line('err', 'ERROR') },
    close: () => {
      const open = Object.values(streams) as WriteStream[];
      if (open.length === 0) return undefined;
      return Promise.all(open.map((s) => new Promise<void>((resolve) => s.end(() => resolve())))).then(() => undefined);
    },
  };
}

/** Creates the `inline` executor. */
export function createInlineExecutor(): Executor {
  let host: ExecutorHost | undefined;
  const active = new Set<string>();
  /** The step function and its context; throws when the executor cannot run the job. */
  const prepare = (job: JobRequest) => {
    const h = host;
    if (!h) throw new CairnError('CAIRN_EXECUTOR', 'The "inline" executor was not started; call start(host) before submit().');
    const fn = job.spec.fn;
    if (typeof fn !== 'function') {
      throw new CairnError('CAIRN_EXECUTOR', `Step "${job.spec.name}" has no in-process function (it was decoded from bytes); run it on an executor that imports its module, e.g. "threads".`, { step: job.spec.name });
    }
    const { log, close } = attemptLogger(job);
    const ctx: StepContext = {
      name: job.spec.name,
      outputPath: job.outputPath,
      depPaths: job.task.depPaths,
      depResults: job.task.depResults,
      signal: job.signal,
      log,
      resources: job.task.resources,
      attempt: job.task.attempt,
      client: h.client,
    };
    return { fn, ctx, close, h };
  };
  /** Calls the step: its status, or a promise of it when the function returned one (or a log file is being closed). */
  const call = (job: JobRequest, fn: NonNullable<JobRequest['spec']['fn']>, ctx: StepContext, close: () => Promise<void> | undefined): JobStatus | Promise<JobStatus> => {
    const done = (status: JobStatus): JobStatus | Promise<JobStatus> => {
      const closing = close();
      return closing === undefined ? status : closing.then(() => status);
    };
    let out: unknown;
    try {
      out = fn(job.outputPath, ctx);
    } catch (error) {
      return done({ state: 'failed', error });
    }
    if (out !== null && typeof (out as Promise<unknown>)?.then === 'function') {
      return Promise.resolve(out as Promise<unknown>).then(
        (result) => done({ state: 'succeeded', result }),
        (error: unknown) => done({ state: 'failed', error }),
      );
    }
    return done({ state: 'succeeded', result: out });
  };
  return {
    name: 'inline',
    capabilities,
    async start(h) {
      host = h;
    },
    async submit(job) {
      const { fn, ctx, close, h } = prepare(job);
      const jobId = job.jobKey;
      active.add(jobId);
      // Called after submit resolves, so a synchronous step function cannot report first.
      queueMicrotask(() => {
        const status = call(job, fn, ctx, close);
        if (status instanceof Promise) {
          void status.then((s) => {
            active.delete(jobId);
            h.report(jobId, s);
          });
        } else {
          active.delete(jobId);
          h.report(jobId, status);
        }
      });
      return { jobId, executor: 'inline', info: {} };
    },
    runSync(job) {
      let prepared: ReturnType<typeof prepare>;
      try {
        prepared = prepare(job);
      } catch (error) {
        return { state: 'failed', error };
      }
      const status = call(job, prepared.fn, prepared.ctx, prepared.close);
      if (!(status instanceof Promise)) return status;
      const jobId = job.jobKey;
      active.add(jobId);
      return status.then((s) => {
        active.delete(jobId);
        return s;
      });
    },
    async poll(handles) {
      const out = new Map<string, JobStatus>();
      for (const hd of handles) out.set(hd.jobId, active.has(hd.jobId) ? { state: 'running' } : { state: 'lost', reason: 'not running in this process' });
      return out;
    },
    async cancel() {
      // The runner aborts the job's signal; an in-process function cannot be stopped otherwise.
    },
    async stop() {
      host = undefined;
    },
  };
}
