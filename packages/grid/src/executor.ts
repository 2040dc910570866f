/**
 * The grid executor: what every batch-scheduler plugin is, given a {@link GridScheduler}
 * adapter. One job per step, or packed job arrays (pack options); ONE batched status check per
 * interval for all active steps; batched cancels; adoption of jobs recorded by an earlier
 * runner. The wrapper's exit-code file is the truth about how a step ended; the scheduler's
 * state says why a job was stopped.
 */
import { rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { CairnError } from '@cairn/core';
import { createAdopter } from './adopt.js';
import { isCommandTask } from './command-job.js';
import { positiveInt } from './command.js';
import { createLimiter } from './limit.js';
import { createBatcher, type Batcher } from './batcher.js';
import { writeJobFile } from './job-dir.js';
import { observe } from './observe.js';
import type { GridExecutorOptions } from './options.js';
import { packable, packPolicy, shapeKey, type PackPolicy } from './pack-policy.js';
import { createPoller } from './poller.js';
import { SECRETS_FILE, tailLogs, type Executor, type ExecutorCapabilities, type ExecutorHost, type JobHandle, type JobRequest, type JobState, type JobStatus } from './runner-api.js';
import type { GridScheduler } from './scheduler.js';
import { planBatch, submitArray, submitSingle, type GridCounters, type SubmitContext } from './submission.js';
import { trackedFrom, type Tracked } from './tracked.js';

/** A grid executor, with counters of its calls to the scheduler. */
export interface GridExecutor extends Executor {
  /** Submissions, status and accounting queries, cancels made so far. */
  readonly counters: Readonly<GridCounters>;
  /** The scheduler adapter. */
  readonly scheduler: GridScheduler;
}

const TERMINAL = new Set<JobState>(['succeeded', 'failed', 'cancelled', 'lost']);

interface Waiting {
  readonly job: JobRequest;
  resolve(handle: JobHandle): void;
  reject(err: unknown): void;
}

/** Creates a grid executor over `scheduler`. */
export function createGridExecutor(scheduler: GridScheduler, options: GridExecutorOptions = {}): GridExecutor {
  const name = options.name ?? scheduler.name;
  const graceMs = options.exitFileGraceMs ?? 5000;
  const policy: PackPolicy | undefined = options.pack ? packPolicy(options.pack) : undefined;
  const counters: GridCounters = { submissions: 0, steps: 0, statusQueries: 0, accountingQueries: 0, cancellations: 0 };
  const ctx: SubmitContext = { scheduler, name, options, counters, limit: createLimiter(positiveInt('maxSubmitsInFlight', options.maxSubmitsInFlight, 8)) };
  const capabilities: ExecutorCapabilities = {
    remote: true,
    sharedFs: options.sharedFs ?? true,
    deploysCode: false,
    inProcess: false,
    cancel: 'reliable',
    logs: true,
    resumable: true,
    // A 0600 secrets file in the 0700 attempt directory, read and deleted by the wrapper (job-dir.ts).
    secrets: true,
    ...(options.maxConcurrency !== undefined ? { maxConcurrency: options.maxConcurrency } : {}),
  };

  let host: ExecutorHost | undefined;
  const active = new Map<string, Tracked>();
  /** Steps of each packed task this executor asked to cancel, by task id. */
  const cancelledInTask = new Map<string, Set<number>>();
  /** Packs this executor submitted: steps not yet reported, and whether every reported one succeeded. */
  const packs = new Map<string, { open: number; clean: boolean }>();

  const poller = createPoller(
    {
      check: checkActive,
      idle: () => active.size === 0,
      failing: (err) => host?.logger.warn(`${name}: status check failed, retrying with backoff: ${(err as Error).message}`),
      recovered: () => host?.logger.info(`${name}: status checks work again`),
    },
    options.poll,
  );

  const watch = (handle: JobHandle): Tracked => {
    const tracked = trackedFrom(handle, scheduler.idKey) as Tracked;
    active.set(handle.jobId, tracked);
    return tracked;
  };

  /** One batched check of all active steps; reports changes. True when anything changed. */
  async function checkActive(): Promise<boolean> {
    const jobs = [...active.values()];
    if (jobs.length === 0) return false;
    const { statuses, stuck, requeued } = await observe(scheduler, counters, jobs, graceMs);
    let changed = false;
    for (const job of jobs) {
      const status = statuses.get(job);
      if (!status || status.state === job.lastState || !active.has(job.handle.jobId)) continue;
      changed = true;
      job.lastState = status.state;
      if (TERMINAL.has(status.state)) {
        active.delete(job.handle.jobId);
        // A step that never started (cancelled in the queue, unstarted in its pack) left its secrets file behind.
        rmSync(join(String(job.handle.info.dir), SECRETS_FILE), { force: true });
        const pack = job.pack ? packs.get(job.pack.place.dir) : undefined;
        if (pack) {
          pack.open--;
          pack.clean &&= status.state === 'succeeded';
        }
      }
      host?.report(job.handle.jobId, status);
    }
    // A job the scheduler holds in an error state never leaves it by itself.
    if (stuck.length > 0) await sendCancel(stuck).catch(() => undefined);
    // A requeued job would run the step again beside its retry.
    if (requeued.length > 0) await sendCancel(requeued).catch((e: Error) => host?.logger.warn(`${name}: cancelling requeued jobs ${requeued.join(', ')}: ${e.message}`));
    return changed;
  }

  const sendCancel = async (ids: string[]): Promise<void> => {
    if (ids.length === 0) return;
    counters.cancellations++;
    await scheduler.cancel(ids);
  };

  const needHost = (): ExecutorHost => {
    if (!host) throw new CairnError('CAIRN_EXECUTOR', `The "${name}" executor was used before start(host).`);
    return host;
  };

  // The runner decides when a job is cancelled and calls `cancel` (contract.ts, JobRequest.signal).
  const follow = (job: JobRequest, handle: JobHandle): JobHandle => {
    watch(handle).secrets = job.secrets;
    return handle;
  };

  /** Submits a batch of ready steps of one shape as packed job arrays. */
  const flush = (items: Waiting[]): void => {
    const live = items.filter((w) => !w.job.signal.aborted);
    for (const w of items) if (w.job.signal.aborted) w.reject(new CairnError('CAIRN_CANCELLED', `Step "${w.job.spec.name}" was cancelled before its batch was submitted.`, { step: w.job.spec.name }));
    if (live.length === 0) return;
    void (async () => {
      if (live.length === 1) {
        const w = live[0] as Waiting;
        await submitSingle(ctx, w.job).then((h) => w.resolve(follow(w.job, h)), w.reject);
        poller.kick();
        return;
      }
      const jobs = live.map((w) => w.job);
      for (const tasks of planBatch(jobs, policy as PackPolicy)) {
        try {
          const handles = await submitArray(ctx, jobs, tasks, packRoot());
          for (const [i, h] of handles) (live[i] as Waiting).resolve(follow(jobs[i] as JobRequest, h));
          const dir = (handles.values().next().value as JobHandle | undefined)?.info.pack as { dir?: string } | undefined;
          if (dir?.dir) packs.set(dir.dir, { open: handles.size, clean: true });
        } catch (err) {
          for (const t of tasks) for (const i of t.steps) (live[i] as Waiting).reject(err);
        }
        poller.kick();
      }
    })();
  };

  const batcher: Batcher<Waiting> | undefined = policy ? createBatcher({ capacity: policy.stepsPerTask * policy.tasksPerArray, maxWaitMs: policy.maxWaitMs, flush }) : undefined;

  const packRoot = (): string => {
    if (options.packRoot) return options.packRoot;
    const prefix = needHost().prefix;
    if (!isAbsolute(prefix)) throw new CairnError('CAIRN_CONFIG', `The "${name}" executor packs steps into a directory on the shared filesystem; the store prefix ${JSON.stringify(prefix)} is not a local path: set packRoot.`);
    return join(prefix, '.cairn', 'grid', name);
  };

  const adopter = createAdopter(scheduler, counters);

  const executor: GridExecutor = {
    name,
    capabilities,
    counters,
    scheduler,

    async start(h) {
      host = h;
      poller.resume();
    },

    async submit(job: JobRequest): Promise<JobHandle> {
      needHost();
      if (batcher && policy && packable(job.resources ?? {}, policy)) {
        packRoot(); // fail early on a store prefix that cannot hold pack directories
        // Command steps pack only with command steps: their task is a shell loop that needs no Node.
        const key = shapeKey(job.resources ?? {}) + (isCommandTask(job.task) ? '\u0000command' : '');
        return new Promise<JobHandle>((resolve, reject) => batcher.add(key, { job, resolve, reject }));
      }
      const handle = await submitSingle(ctx, job);
      follow(job, handle);
      poller.kick();
      return handle;
    },

    async poll(handles) {
      const jobs = handles.map((h) => active.get(h.jobId) ?? trackedFrom(h, scheduler.idKey)).filter((j): j is Tracked => j !== undefined);
      const { statuses } = await observe(scheduler, counters, jobs, graceMs);
      const out = new Map<string, JobStatus>();
      for (const h of handles) {
        const job = jobs.find((j) => j.handle.jobId === h.jobId);
        if (!job) {
          out.set(h.jobId, { state: 'lost', reason: `not a ${scheduler.label} job handle`, infrastructure: true });
          continue;
        }
        out.set(h.jobId, statuses.get(job) ?? { state: job.lastState && !TERMINAL.has(job.lastState) ? job.lastState : 'running' });
      }
      return out;
    },

    async cancel(handles) {
      const ids = new Set<string>();
      for (const h of handles) {
        const job = active.get(h.jobId) ?? trackedFrom(h, scheduler.idKey);
        if (!job) continue;
        job.cancelRequested = true;
        if (!job.pack) {
          ids.add(job.id);
          continue;
        }
        // One step of a packed task: its worker stops or skips it; the task itself goes once all its steps are cancelled.
        const { place, files } = job.pack;
        await writeJobFile(files.cancel(place.task, place.index), '', 'data', options.jobAccess).catch(() => undefined);
        const set = cancelledInTask.get(job.id) ?? new Set<number>();
        set.add(place.index);
        cancelledInTask.set(job.id, set);
        if (set.size >= place.size) ids.add(job.id);
      }
      await sendCancel([...ids]);
      poller.kick();
    },

    logs(handle, opts) {
      const job = active.get(handle.jobId) ?? trackedFrom(handle, scheduler.idKey);
      if (!job) throw new CairnError('CAIRN_EXECUTOR', `Job ${handle.jobId} is not a ${scheduler.label} job handle (no ${scheduler.idKey} in its info).`);
      return tailLogs(job.logs, { follow: opts.follow, signal: opts.signal, isRunning: () => active.has(handle.jobId) });
    },

    async adopt(handle) {
      needHost();
      if (handle.executor !== name) return null;
      const job = trackedFrom(handle, scheduler.idKey);
      if (!job) return null;
      if (active.has(handle.jobId)) return handle;
      if (!(await adopter.exists(job))) return null;
      watch(handle);
      poller.kick();
      return handle;
    },

    async stop() {
      poller.stop();
      // A pack whose steps all succeeded has nothing left to tell (failed ones keep their task logs).
      for (const [dir, p] of packs) if (p.open === 0 && p.clean) await rm(dir, { recursive: true, force: true }).catch(() => undefined);
      packs.clear();
      for (const w of batcher?.drain() ?? []) w.reject(new CairnError('CAIRN_CANCELLED', `The "${name}" executor stopped before step "${w.job.spec.name}" was submitted.`, { step: w.job.spec.name }));
      active.clear();
      cancelledInTask.clear();
    },
  };
  return executor;
}
