import type { Executor, ExecutorCapabilities, ExecutorHost, JobHandle, JobRequest, JobStatus } from '../../src/executor/contract.js';

/** What the scripted executor does with one job. */
export interface Script {
  /** Milliseconds before the job reports. @default 0 */
  delayMs?: number;
  /** The report (default: succeeded). */
  status?: JobStatus;
}

/**
 * An in-process executor whose outcomes are scripted per job, for scheduler tests. Tracks the
 * jobs it saw, how many ran at once, and cancels.
 */
export function scriptedExecutor(
  script: (job: JobRequest) => Script = () => ({}),
  options: {
    name?: string;
    capabilities?: Partial<ExecutorCapabilities>;
    /** Makes the executor adoptable: what an adopted job does, or null when it is gone. */
    adopt?: (handle: JobHandle) => Script | null;
  } = {},
): Executor & { submitted: JobRequest[]; adopted: string[]; cancelled: string[]; maxInFlight: number; inFlight: number; started: number; stopped: number } {
  let host: ExecutorHost | undefined;
  const timers = new Map<string, NodeJS.Timeout>();
  const schedule = (jobId: string, s: Script) => {
    timers.set(
      jobId,
      setTimeout(() => {
        timers.delete(jobId);
        ex.inFlight--;
        host?.report(jobId, s.status ?? { state: 'succeeded' });
      }, s.delayMs ?? 0),
    );
  };
  const ex = {
    name: options.name ?? 'scripted',
    capabilities: { remote: false, sharedFs: true, deploysCode: false, inProcess: true, cancel: 'reliable', logs: false, resumable: false, ...options.capabilities } as ExecutorCapabilities,
    submitted: [] as JobRequest[],
    adopted: [] as string[],
    cancelled: [] as string[],
    maxInFlight: 0,
    inFlight: 0,
    started: 0,
    stopped: 0,
    async start(h: ExecutorHost) {
      host = h;
      ex.started++;
    },
    async submit(job: JobRequest): Promise<JobHandle> {
      ex.submitted.push(job);
      ex.inFlight++;
      ex.maxInFlight = Math.max(ex.maxInFlight, ex.inFlight);
      const jobId = `${job.jobKey}#${ex.submitted.length}`;
      schedule(jobId, script(job));
      return { jobId, executor: ex.name, info: {} };
    },
    ...(options.adopt
      ? {
          async adopt(handle: JobHandle): Promise<JobHandle | null> {
            const s = options.adopt?.(handle) ?? null;
            if (s === null) return null;
            ex.adopted.push(handle.jobId);
            ex.inFlight++;
            schedule(handle.jobId, s);
            return handle;
          },
        }
      : {}),
    async poll(handles: readonly JobHandle[]) {
      return new Map(handles.map((h) => [h.jobId, { state: timers.has(h.jobId) ? 'running' : 'lost' } as JobStatus]));
    },
    async cancel(handles: readonly JobHandle[]) {
      for (const h of handles) {
        const t = timers.get(h.jobId);
        if (t) {
          clearTimeout(t);
          timers.delete(h.jobId);
          ex.inFlight--;
          ex.cancelled.push(h.jobId);
          host?.report(h.jobId, { state: 'cancelled' });
        }
      }
    },
    async stop() {
      ex.stopped++;
    },
  };
  return ex;
}
