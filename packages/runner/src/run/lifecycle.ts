/**
 * The lifecycle of one step, written once:
 *
 *   lease → (takeover: adopt a dead runner's job, sweep its leftovers) → dependencies' results
 *   → attempts (stage, run, decide: retry | commit | abandon) → commit with release → settle.
 *
 * It is a generator that yields only promises: every stage either answers at once or returns a
 * promise (stores, executors: see maybe.ts), and the lifecycle goes on synchronously as long as
 * they answer at once. A step on the in-memory store or a local disk with an in-process executor
 * therefore finishes on the scheduler's own stack, with the same rules, files and events as one
 * that waits on a cluster for an hour.
 */
import { CairnError, hasCode } from '@cairn/core';
import type { JobHandle } from '../executor/contract.js';
import { isPromise } from '../maybe.js';
import { thisHost } from '../store/leases.js';
import { type AttemptRecord, errorData, type JobRecord } from '../store/records.js';
import type { StagedAttempt } from '../store/store.js';
import { checkAdoptedSources } from './adopted.js';
import { confirmDeps } from './confirm-deps.js';
import { type Adopted, adopt, type AttemptResult, endOf, errorOf, handleOf, runAttempt } from './attempts.js';
import { commitStep, firstTryRecord, fullRecord, recordValue, saveArtifact } from './commit.js';
import type { Acquired } from './leases.js';
import { ADOPTED, ADOPTED_DEP, extOf, FORCED, LEASED, type Node, SAW_FOREIGN_LEASE, TOOK_OVER, UNCONFIRMED_DEP } from './node.js';
import { decide } from './retry-policy.js';
import type { Run } from './run.js';

type Lifecycle = Generator<Promise<unknown>, void, unknown>;

/** Starts `node`'s lifecycle; it may finish (and settle the step) before this returns. */
export function startLifecycle(run: Run, node: Node): void {
  const gen = lifecycle(run, node);
  let r: IteratorResult<Promise<unknown>, void>;
  try {
    r = gen.next();
  } catch (err) {
    run.bug(node, err);
    return;
  }
  if (!r.done) suspend(run, node, gen, r.value);
}

/** The lifecycle waits on `p`: the heartbeat keeps its lease meanwhile. */
function suspend(run: Run, node: Node, gen: Lifecycle, p: Promise<unknown>): void {
  run.leases.hold(node);
  p.then(
    (v) => resume(run, node, gen, v, false),
    (e: unknown) => resume(run, node, gen, e, true),
  );
}

function resume(run: Run, node: Node, gen: Lifecycle, value: unknown, failed: boolean): void {
  let r: IteratorResult<Promise<unknown>, void>;
  try {
    r = failed ? gen.throw(value) : gen.next(value);
  } catch (err) {
    run.bug(node, err);
    return;
  }
  if (!r.done) suspend(run, node, gen, r.value);
}

function previousFailure(node: Node, status: string): CairnError {
  return new CairnError(
    'CAIRN_PREVIOUS_FAILURE',
    `Step "${node.name}" failed in an earlier run (status ${status} at ${node.path}). Fix it and rerun with forceRunFailed: true (cairn run --force-run-failed) to try it again.`,
    { step: node.name },
  );
}

function* lifecycle(run: Run, node: Node): Lifecycle {
  const prior = node.prior?.status;
  if (!run.config.forceRunFailed && (node.flags & (SAW_FOREIGN_LEASE | FORCED)) === 0 && (prior === 'FAILED' || prior === 'DEP_FAILED')) {
    run.ended(node, 'failed', previousFailure(node, prior));
    return;
  }
  // An adopted source (its own, or a dependency's) that is missing fails the step before it
  // starts, writing nothing (not FAILED: once the data is there, the next run goes ahead).
  let v: unknown = (node.flags & (ADOPTED | ADOPTED_DEP)) !== 0 ? checkAdoptedSources(run.store, run.prefix, node.spec) : undefined;
  if (v !== undefined) {
    try {
      yield v as Promise<void>;
    } catch (err) {
      run.ended(node, 'failed', err);
      return;
    }
  }
  // One clock read stamps the lease and, when the lifecycle does not wait before it, starts the
  // first attempt (as the old scheduler did; 0 once it waited: the attempt reads the clock then).
  let clock = Date.now();
  v = run.leases.acquire(node, clock);
  if (isPromise(v)) {
    v = yield v;
    clock = 0;
  }
  if (v !== 'acquired') {
    run.notAcquired(node, v as Exclude<Acquired, 'acquired'>);
    return;
  }
  // The lease is ours from here until the commit releases it, or it is lost.
  let staged: StagedAttempt | undefined;
  try {
    if (run.cancelled) {
      v = run.leases.release(node);
      if (isPromise(v)) yield v;
      run.ended(node, 'cancelled', run.cancelReason);
      return;
    }
    // Only a dependency served from the store has a result to read (most steps have none).
    if ((node.flags & UNCONFIRMED_DEP) !== 0) {
      v = confirmDeps(run, node);
      if (isPromise(v)) {
        yield v;
        clock = 0;
      }
    }
    let adopted: Adopted | null = null;
    if ((node.flags & TOOK_OVER) !== 0) {
      clock = 0;
      adopted = (yield adopt(run, node)) as Adopted | null;
      v = run.store.sweep(node.path, adopted?.record.staged);
      if (isPromise(v)) yield v;
    }
    const firstAttempt = adopted !== null ? adopted.record.attempt : 1;
    // The start of the step's first attempt (known once it has started: no clock read of its own).
    let firstStart = adopted !== null ? adopted.record.firstStart : 0;
    // Null while this run has made one attempt that has not ended: the common case needs no list.
    let attempts: AttemptRecord[] | null = adopted !== null ? [...adopted.record.attempts] : null;
    let infra = 0;
    // After a takeover a dead runner's job record may be there: it goes before the commit, adopted or not.
    if ((node.flags & TOOK_OVER) !== 0) extOf(node).jobFile = Promise.resolve();
    for (let attempt = firstAttempt; ; attempt++) {
      if (adopted !== null) staged = adopted.record.staged as StagedAttempt;
      else {
        v = run.store.stage(node.path, run.holder, attempt, staged);
        if (isPromise(v)) {
          v = yield v;
          clock = 0;
        }
        staged = v as StagedAttempt;
      }
      const accepted = run.registry.get(node.executor).capabilities.resumable ? jobRecorder(run, node, attempt, firstStart, attempts ?? [], staged) : undefined;
      v = runAttempt(run, node, staged, attempt, adopted, clock, accepted);
      clock = 0;
      const r = (isPromise(v) ? yield v : v) as AttemptResult;
      if (firstStart === 0) firstStart = r.start;
      adopted = null;
      if (node.ext !== null) node.ext.job = null;
      const end = endOf(r);
      const decision = decide({ end, infrastructure: r.status.infrastructure === true }, { attempts: attempt, infraRetries: infra }, { retries: node.spec.retries, infraRetries: run.config.infraRetries });
      const error = errorOf(node, r);
      if (decision === 'succeed') {
        v = saveArtifact(node, r.status.result, staged);
        if (isPromise(v)) yield v;
      }
      if (decision === 'succeed' && attempts === null && attempt === 1 && !r.adopted && r.executor === node.executor) {
        recordValue(node, r.status.result, staged);
        if (node.ext !== null && node.ext.jobFile !== null) yield* removeJobFile(run, node, node.ext.jobFile);
        v = commitStep(run, node, 'SUCCESS', firstTryRecord(node, r.start, r.end), staged);
        if (isPromise(v)) yield v;
        run.ended(node, 'succeeded', undefined);
        return;
      }
      (attempts ??= []).push({
        attempt,
        start: r.start,
        end: r.end,
        state: end,
        ...(error !== undefined ? { error: errorData(error) } : {}),
        executor: r.executor,
        jobId: handleOf(r).jobId,
        host: thisHost(),
        ...(r.adopted ? { adopted: true } : {}),
      });
      if (decision === 'retry' || decision === 'retry-infra') {
        if (decision === 'retry-infra') infra++;
        run.retrying(node, attempt, error);
        continue;
      }
      if (decision === 'abandon') {
        // The step's directory belongs to the new holder now: write nothing there.
        run.leases.forget(node);
        v = run.store.abandon(staged);
        if (isPromise(v)) yield v;
        run.ended(node, 'failed', error);
        return;
      }
      if (node.ext !== null && node.ext.jobFile !== null) yield* removeJobFile(run, node, node.ext.jobFile);
      const status = decision === 'succeed' ? 'SUCCESS' : decision === 'cancel' ? 'CANCELLED' : 'FAILED';
      const value = decision === 'succeed' ? recordValue(node, r.status.result, staged) : undefined;
      v = commitStep(run, node, status, fullRecord(node, status, attempts, handleOf(r), error, value, firstStart, r.end), staged);
      if (isPromise(v)) yield v;
      run.ended(node, decision === 'succeed' ? 'succeeded' : decision === 'cancel' ? 'cancelled' : 'failed', error);
      return;
    }
  } catch (err) {
    yield* failUnderLease(run, node, staged, err);
  }
}

/**
 * What a resumable executor's accepted job leaves: its job record, so that a runner taking the
 * lease over can adopt the job (a function of its own: a closure in the lifecycle would make
 * every step's lifecycle allocate the variables it captures).
 */
function jobRecorder(run: Run, node: Node, attempt: number, firstStart: number, attempts: readonly AttemptRecord[], staged: StagedAttempt): (handle: JobHandle, start: number) => void {
  return (handle, start) => {
    const record: JobRecord = { cairn: 1, executor: node.executor, job: handle, attempt, start: Date.now(), firstStart: firstStart !== 0 ? firstStart : start, attempts, host: thisHost(), runId: run.config.runId, staged };
    extOf(node).jobFile = Promise.resolve(run.store.writeJob(node.path, record)).catch((err: unknown) => run.logger.warn(`Step ${node.name}: recording job ${handle.jobId} failed: ${String(err)}`));
  };
}

/** Waits for the job record's write and removes it: a job record never outlives its step's commit. */
function* removeJobFile(run: Run, node: Node, written: Promise<unknown>): Generator<Promise<unknown>, void, unknown> {
  yield written;
  const v = run.store.removeJob(node.path);
  if (isPromise(v)) yield v;
}

/**
 * A store failure or a bug inside the lifecycle: record FAILED under the lease if that still
 * works, else give the lease back; the step fails with the original error either way. A lost
 * lease (the commit's fence refused) writes nothing.
 */
function* failUnderLease(run: Run, node: Node, staged: StagedAttempt | undefined, err: unknown): Generator<Promise<unknown>, void, unknown> {
  if (hasCode(err, 'CAIRN_LEASE_LOST')) {
    run.leases.forget(node);
    run.ended(node, 'failed', new CairnError('CAIRN_LEASE_LOST', `Step "${node.name}": ${err.message}`, { step: node.name, cause: err }));
    return;
  }
  if ((node.flags & LEASED) !== 0) {
    try {
      const now = Date.now();
      const v = commitStep(run, node, 'FAILED', fullRecord(node, 'FAILED', [], undefined, err, undefined, now, now), staged);
      if (isPromise(v)) yield v;
    } catch {
      try {
        const v = run.leases.release(node);
        if (isPromise(v)) yield v;
      } catch {
        // Nothing more to do: the lease goes stale and another run takes it over.
      }
    }
  }
  run.ended(node, 'failed', err);
}
