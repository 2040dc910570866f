/**
 * One attempt of a step on its executor: the job request, then `runSync` on the runner's stack
 * where the executor offers it (the step may still return a promise), or `submit` and the
 * executor's report, with the step's timeout; a cancel, a timeout or a lost lease aborts it. Also
 * adoption: re-attaching to the job a dead runner left running, instead of submitting again.
 */
import { CairnError, hasCode, isCairnError } from '@cairn/core';
import { clientStorage, type ExecutorClient } from '../context.js';
import type { Executor, JobHandle, JobStatus } from '../executor/contract.js';
import { isPromise, type Maybe } from '../maybe.js';
import type { ExecutorRegistry } from '../registry.js';
import type { JobRecord } from '../store/records.js';
import type { StagedAttempt, Store } from '../store/store.js';
import { Job, type JobSource } from './job.js';
import { extOf, type Node } from './node.js';
import type { AttemptEnd } from './retry-policy.js';

/** How an attempt went. */
export interface AttemptResult {
  /** The executor's terminal report (or `cancelled` when the runner stopped waiting). */
  readonly status: JobStatus;
  /** The job's handle: the executor's, or for an attempt run on the runner's stack one made from its job key. */
  readonly handle: JobHandle | undefined;
  /** Registry key of the executor that ran it. */
  readonly executor: string;
  readonly start: number;
  readonly end: number;
  /** Why the runner stopped it (cancel, timeout, lease loss), if it did. */
  readonly stopped: unknown;
  /** The job was started by an earlier runner and adopted by this one. */
  readonly adopted: boolean;
  /** The attempt as its executor saw it. */
  readonly job: Job;
}

/** The handle of an attempt: the executor's, or one made from the job key for an attempt run on the runner's stack. */
export function handleOf(r: AttemptResult): JobHandle {
  return r.handle ?? { jobId: r.job.jobKey, executor: r.executor, info: {} };
}

/** A dead runner's job, re-attached. */
export interface Adopted {
  readonly record: JobRecord;
  readonly executor: Executor;
  readonly handle: JobHandle;
}

/** What attempts need from their run. */
export interface AttemptHost extends JobSource {
  readonly registry: ExecutorRegistry;
  readonly store: Store;
  readonly client: ExecutorClient;
  /** True while a pump pass of the run runs in the client's async context (set by Run.inContext). */
  readonly inClient: boolean;
  readonly logger: { info(m: string): void; warn(m: string): void };
  readonly cancelled: boolean;
  readonly cancelReason: unknown;
  /** The attempt running on the runner's own stack right now (a cancel aborts it). */
  syncJob: Job | null;
  /** Starts executor `name` for this run (once). */
  ensureStarted(name: string): Maybe<void>;
  /** Reports `running`. */
  running(node: Node, attempt: number, staged: StagedAttempt): void;
}

const ABORTED: JobStatus = Object.freeze({ state: 'cancelled', reason: 'aborted' });

/** How an attempt ended, for the retry policy and the record. */
export function endOf(r: AttemptResult): AttemptEnd {
  if (r.status.state === 'succeeded') return 'succeeded';
  const code = isCairnError(r.stopped) ? r.stopped.code : undefined;
  if (code === 'CAIRN_TIMEOUT') return 'timeout';
  if (code === 'CAIRN_LEASE_LOST') return 'lease-lost';
  if (r.stopped !== undefined || r.status.state === 'cancelled') return 'cancelled';
  if (r.status.preempted === true || hasCode(r.status.error, 'CAIRN_PREEMPTED')) return 'preempted';
  return r.status.state === 'lost' ? 'lost' : 'failed';
}

/** The error an attempt ended with (undefined for a success). */
export function errorOf(node: Node, r: AttemptResult): unknown {
  if (r.status.state === 'succeeded') return undefined;
  return r.stopped ?? r.status.error ?? new CairnError('CAIRN_REMOTE', `Step "${node.name}": job ${r.status.state}${r.status.reason ? ` (${r.status.reason})` : ''}.`, { step: node.name });
}

/**
 * Runs attempt `attempt` of `node` in `staged` (or waits on `adopted`), starting at `clock`
 * (epoch ms; 0: now). `accepted` is told the handle (and the attempt's start) once a resumable
 * executor accepted the job.
 */
export function runAttempt(host: AttemptHost, node: Node, staged: StagedAttempt, attempt: number, adopted: Adopted | null, clock: number, accepted?: (handle: JobHandle, start: number) => void): Maybe<AttemptResult> {
  const key = adopted !== null ? adopted.record.executor : node.executor;
  const started = host.ensureStarted(key);
  if (isPromise(started)) return beginAfter(started, host, node, staged, attempt, adopted, key, accepted);
  return begin(host, node, staged, attempt, adopted, key, clock, accepted);
}

/** {@link begin} once the executor has started (its own function: a closure in runAttempt would make every call allocate what it captures). */
async function beginAfter(started: Promise<void>, host: AttemptHost, node: Node, staged: StagedAttempt, attempt: number, adopted: Adopted | null, key: string, accepted: ((h: JobHandle, start: number) => void) | undefined): Promise<AttemptResult> {
  await started;
  return begin(host, node, staged, attempt, adopted, key, 0, accepted);
}

/** `runSync` called as a method of `executor` (for AsyncLocalStorage.run, without a closure). */
function callRunSync(executor: Executor, job: Job): Maybe<JobStatus> {
  return (executor.runSync as NonNullable<Executor['runSync']>)(job);
}

function begin(host: AttemptHost, node: Node, staged: StagedAttempt, attempt: number, adopted: Adopted | null, key: string, clock: number, accepted: ((h: JobHandle, start: number) => void) | undefined): Maybe<AttemptResult> {
  const executor = adopted !== null ? adopted.executor : host.registry.get(key);
  const job = new Job(host, node, staged, attempt);
  if (host.cancelled) job.abort(host.cancelReason);
  const start = adopted !== null ? adopted.record.start : clock !== 0 ? clock : Date.now();
  host.running(node, attempt, staged);
  if (executor.runSync !== undefined && executor.capabilities.inProcess && adopted === null && node.spec.timeoutMs === undefined && !job.aborted) {
    // In the client's async context, so values the caller keeps in AsyncLocalStorage reach the step.
    host.syncJob = job;
    let status: Maybe<JobStatus>;
    try {
      status = host.inClient || clientStorage.getStore() === host.client ? callRunSync(executor, job) : clientStorage.run(host.client, callRunSync, executor, job);
    } finally {
      host.syncJob = null;
    }
    // A step that cancelled the run while it ran (the only abort that can reach it on this stack) was stopped.
    if (!isPromise(status)) return resultOf(job.aborted ? ABORTED : status, job, undefined, key, start, false);
    extOf(node).job = job;
    return resultLater(status, job, key, start);
  }
  extOf(node).job = job;
  return submitAndWait(host, node, executor, key, job, start, adopted, accepted);
}

function resultOf(status: JobStatus, job: Job, handle: JobHandle | undefined, executor: string, start: number, adopted: boolean): AttemptResult {
  return { status, handle, executor, start, end: Date.now(), stopped: job.aborted ? job.reason : undefined, adopted, job };
}

/** `r` without the step's returned value, errors or job (a stepless shell), made by the same literal (the same shape): kept after its run (shapes.ts). */
export function releasedResult(r: AttemptResult): AttemptResult {
  return resultOf({ state: r.status.state }, r.job.shell(), undefined, r.executor, r.start, r.adopted);
}

/** The result of a `runSync` that returned a promise (a function of its own: a closure in begin would make every call allocate what it captures). */
async function resultLater(status: Promise<JobStatus>, job: Job, key: string, start: number): Promise<AttemptResult> {
  return resultOf(await untilAborted(status, job), job, undefined, key, start, false);
}

/** The step's status, or cancelled at once when the job is aborted first. */
function untilAborted(status: Promise<JobStatus>, job: Job): Promise<JobStatus> {
  const signal = job.signal;
  if (signal.aborted) return Promise.resolve(ABORTED);
  return new Promise((resolve) => {
    const onAbort = () => resolve(ABORTED);
    signal.addEventListener('abort', onAbort, { once: true });
    void status.then((s) => {
      signal.removeEventListener('abort', onAbort);
      resolve(s);
    });
  });
}

/**
 * Submits the job (or waits on the adopted one) and resolves on its terminal report, or at once
 * when the job is aborted. Reports are routed by the registry key, not `executor.name`.
 */
function submitAndWait(host: AttemptHost, node: Node, executor: Executor, key: string, job: Job, start: number, adopted: Adopted | null, accepted: ((h: JobHandle, start: number) => void) | undefined): Promise<AttemptResult> {
  const { registry, logger } = host;
  const signal = job.signal;
  const spec = node.spec;
  let timer: NodeJS.Timeout | undefined;
  if (spec.timeoutMs !== undefined) {
    const ms = spec.timeoutMs;
    timer = setTimeout(
      () => job.abort(new CairnError('CAIRN_TIMEOUT', `Step "${spec.name}" exceeded its timeout of ${ms} ms (attempt ${job.attempt}). Raise timeoutMs or make the step faster.`, { step: spec.name, retryable: true })),
      Math.max(0, ms - (Date.now() - start)),
    );
  }
  return new Promise((resolve) => {
    let handle: JobHandle | undefined = adopted?.handle;
    let done = false;
    const finish = (status: JobStatus) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      if (handle) registry.forget(key, handle.jobId);
      resolve(resultOf(status, job, handle, key, start, adopted !== null));
    };
    const cancel = (h: JobHandle) => executor.cancel([h]).catch((err: unknown) => logger.warn(`Cancelling ${job.jobKey} failed: ${String(err)}`));
    const onAbort = () => {
      finish(ABORTED);
      if (handle) void cancel(handle);
    };
    if (signal.aborted) {
      finish(ABORTED);
      if (handle) void cancel(handle);
      return;
    }
    signal.addEventListener('abort', onAbort, { once: true });
    const submitted = adopted !== null ? Promise.resolve(adopted.handle) : clientStorage.run(host.client, () => executor.submit(job));
    submitted.then(
      (h) => {
        handle = h;
        if (done) {
          registry.forget(key, h.jobId);
          void cancel(h);
          return;
        }
        if (adopted === null) accepted?.(h, start);
        registry.expect(key, h.jobId, finish);
      },
      (error: unknown) => finish({ state: 'failed', error }),
    );
  });
}

/**
 * The job a dead runner recorded for `node` (whose lease this run took over), re-attached through
 * its executor's `adopt`; null when there is none or it is gone (the step is then submitted afresh).
 * The job record stays until the step is committed: a runner that dies after adopting leaves it
 * for the next one.
 */
export async function adopt(host: AttemptHost, node: Node): Promise<Adopted | null> {
  const { store, registry, logger } = host;
  const record = await Promise.resolve(store.readJob(node.path)).catch(() => null);
  if (record === null) return null;
  if (!registry.has(record.executor)) {
    logger.warn(`Step ${node.name}: cannot adopt job ${record.job.jobId}: executor "${record.executor}" is not registered; submitting again.`);
    return null;
  }
  const executor = registry.get(record.executor);
  if (!executor.capabilities.resumable || executor.adopt === undefined || record.staged === undefined) return null;
  try {
    await host.ensureStarted(record.executor);
    const handle = await executor.adopt(record.job);
    if (handle === null) {
      logger.info(`Step ${node.name}: job ${record.job.jobId} of the previous runner is gone; submitting again.`);
      return null;
    }
    logger.info(`Step ${node.name}: adopted job ${handle.jobId} (attempt ${record.attempt}, executor "${record.executor}") from run ${record.runId}.`);
    return { record, executor, handle };
  } catch (err) {
    logger.warn(`Step ${node.name}: adopting job ${record.job.jobId} failed (${String(err)}); submitting again.`);
    return null;
  }
}
