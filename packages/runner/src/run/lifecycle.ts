/**
 * The lifecycle of one step, written once:
 *
 *   lease → (takeover: adopt a dead runner's job, sweep its leftovers) → dependencies' results
 *   → attempts (stage, run, decide: retry | commit | abandon) → commit with release → settle.
 *
 * It is a state machine (a stage number and one `advance()`, as lage's WrappedTarget): every
 * stage either answers at once or returns a promise (stores, executors: see maybe.ts), and the
 * lifecycle goes on synchronously as long as they answer at once. A step on the in-memory store
 * or a local disk with an in-process executor therefore finishes on the scheduler's own stack,
 * with the same rules, files and events as one that waits on a cluster for an hour. A generator
 * per step cost ~450 B whether it waited or not (bench row "scheduler overhead (no-op steps)").
 */
import { CairnError, hasCode } from '@cairn/core';
import type { JobHandle } from '../executor/contract.js';
import { isPromise } from '../maybe.js';
import { thisHost } from '../store/leases.js';
import { type AttemptRecord, errorData, type JobRecord } from '../store/records.js';
import type { StagedAttempt } from '../store/store.js';
import { checkAdoptedSources } from './adopted.js';
import { confirmDeps } from './confirm-deps.js';
import { type Adopted, adopt, type AttemptResult, endOf, errorOf, handleOf, releasedResult, runAttempt } from './attempts.js';
import { namedCheckpointError } from './job.js';
import { commitStep, firstTryRecord, fullRecord, recordValue, saveArtifact } from './commit.js';
import type { Acquired } from './leases.js';
import { ADOPTED, ADOPTED_DEP, extOf, FORCED, LEASED, type Node, SAW_FOREIGN_LEASE, TOOK_OVER, UNCONFIRMED_DEP } from './node.js';
import { decide, decideAtOnce, type Decision, preemptionBackoffMs } from './retry-policy.js';
import { preemptionRetriesOf } from './step-options.js';
import { maskAttempt } from '../secrets/attempt-mask.js';
import type { Run } from './run.js';


/** Stages of {@link StepLifecycle}, in the order a step usually goes through them. */
const START = 0;
/** The adopted-source check answered. */
const SOURCES_CHECKED = 1;
/** The lease acquisition answered (`value`). */
const ACQUIRED = 2;
/** Cancelled under the lease: the release answered. */
const CANCEL_RELEASED = 3;
/** Dependencies' results confirmed: adopt a dead runner's job, if this is a takeover. */
const TAKEOVER = 4;
/** The adoption answered (`value`): sweep. */
const ADOPTED_JOB = 5;
/** Attempts start from here. */
const ATTEMPTS = 6;
/** Stage the next attempt. */
const STAGE = 7;
/** The staging answered (`value`). */
const STAGED = 8;
/** Run the attempt. */
const RUN = 9;
/** The attempt answered (`value`): decide. */
const RAN = 10;
/** The artifact of a successful attempt is saved. */
const SAVED = 11;
/** The job record's write answered: remove it, then go to `afterJob`. */
const JOB_WRITTEN = 12;
/** The job record is removed. */
const JOB_REMOVED = 13;
/** First try succeeded: commit. */
const COMMIT_FIRST = 14;
/** Any other ending: commit the full record. */
const COMMIT_FULL = 15;
/** The commit answered: the step ends as `outcome`. */
const COMMITTED = 16;
/** The abandoned attempt is cleaned up. */
const ABANDONED = 17;
/** Failing under the lease: the FAILED commit answered. */
const FAIL_COMMITTED = 18;
/** Failing under the lease: the release answered (after the FAILED commit threw). */
const FAIL_RELEASED = 19;
/** Ended: nothing more to do. */
const DONE = 20;

/** Starts `node`'s lifecycle; it may finish (and settle the step) before this returns. */
export function startLifecycle(run: Run, node: Node): void {
  new StepLifecycle(run, node).advance(undefined, false);
}

/**
 * One step's way from lease to settlement. State lives in fields; what a stage waits on is
 * awaited once and its answer handed to {@link advance}. Fields a step that finishes at once
 * never needs (the attempt list, an adopted job) stay null.
 */
class StepLifecycle {
  readonly run: Run;
  /** The step (null once {@link release}d, after the run). */
  node: Node;
  stage = START;
  /** The lease is ours: a failure goes through {@link failUnderLease}. */
  leased = false;
  /** One clock read stamps the lease and starts the first attempt when nothing waits between (0 once it waited: the attempt reads the clock then). */
  clock = 0;
  staged: StagedAttempt | undefined = undefined;
  adopted: Adopted | null = null;
  attempt = 1;
  /** The start of the step's first attempt (known once it has started: no clock read of its own). */
  firstStart = 0;
  /** Null while this run has made one attempt that has not ended: the common case needs no list. */
  attempts: AttemptRecord[] | null = null;
  infra = 0;
  /** Preempted attempts retried in this run. */
  preemptions = 0;
  r: AttemptResult | undefined = undefined;
  decision: Decision | undefined = undefined;
  error: unknown = undefined;
  /** Where to go once the job record is removed. */
  afterJob = DONE;
  /** How the step ends once its commit answers. */
  outcome: 'succeeded' | 'failed' | 'cancelled' = 'succeeded';
  /** The error a failure under the lease ends the step with. */
  failure: unknown = undefined;

  constructor(run: Run, node: Node) {
    this.run = run;
    this.node = node;
  }

  /** Goes on from the current stage with the answer it waited for (`failed`: a rejection). */
  advance(value: unknown, failed: boolean): void {
    for (;;) {
      let next: unknown;
      try {
        next = this.step(value, failed);
      } catch (err) {
        if (!this.leased) {
          this.run.bug(this.node, err);
          return;
        }
        // A store failure or a bug under the lease: record FAILED if that still works.
        this.leased = false;
        try {
          next = this.failUnderLease(err);
        } catch (err2) {
          this.run.bug(this.node, err2);
          return;
        }
      }
      if (next === undefined) return;
      if (isPromise(next)) {
        // The lifecycle waits: the heartbeat keeps its lease meanwhile.
        this.run.leases.hold(this.node);
        next.then(
          (v) => this.advance(v, false),
          (e: unknown) => this.advance(e, true),
        );
        return;
      }
      // A stage that failed synchronously inside failUnderLease's own stages comes back here.
      value = (next as Sync).value;
      failed = (next as Sync).failed;
    }
  }

  /**
   * Runs stages until one waits (returns its promise) or the step ends (returns undefined).
   * `value`/`failed` is the answer the current stage waited for.
   */
  step(value: unknown, failed: boolean): Promise<unknown> | Sync | undefined {
    const { run, node } = this;
    for (;;) {
      switch (this.stage) {
        case START: {
          const prior = node.prior?.status;
          if (!run.config.forceRunFailed && (node.flags & (SAW_FOREIGN_LEASE | FORCED)) === 0 && (prior === 'FAILED' || prior === 'DEP_FAILED')) {
            run.ended(node, 'failed', previousFailure(node, prior));
            return this.end();
          }
          // An adopted source (its own, or a dependency's) that is missing fails the step before it
          // starts, writing nothing (not FAILED: once the data is there, the next run goes ahead).
          if ((node.flags & (ADOPTED | ADOPTED_DEP)) !== 0) {
            const v = checkAdoptedSources(run.store, run.prefix, node.spec);
            if (v !== undefined) {
              this.stage = SOURCES_CHECKED;
              if (isPromise(v)) return v;
              value = v;
              failed = false;
              continue;
            }
          }
          this.stage = SOURCES_CHECKED;
          value = undefined;
          failed = false;
          continue;
        }
        case SOURCES_CHECKED: {
          if (failed) {
            run.ended(node, 'failed', value);
            return this.end();
          }
          this.clock = Date.now();
          const v = run.leases.acquire(node, this.clock);
          this.stage = ACQUIRED;
          if (isPromise(v)) {
            this.clock = 0;
            return v;
          }
          value = v;
          continue;
        }
        case ACQUIRED: {
          if (failed) throw value;
          if (value !== 'acquired') {
            run.notAcquired(node, value as Exclude<Acquired, 'acquired'>);
            return this.end();
          }
          // The lease is ours from here until the commit releases it, or it is lost.
          this.leased = true;
          if (run.cancelled) {
            this.stage = CANCEL_RELEASED;
            const v = run.leases.release(node);
            if (isPromise(v)) return v;
            continue;
          }
          this.stage = TAKEOVER;
          // Only a dependency served from the store has a result to read (most steps have none).
          if ((node.flags & UNCONFIRMED_DEP) !== 0) {
            const v = confirmDeps(run, node);
            if (isPromise(v)) {
              this.clock = 0;
              return v;
            }
          }
          continue;
        }
        case CANCEL_RELEASED:
          if (failed) throw value;
          run.ended(node, 'cancelled', run.cancelReason);
          return this.end();
        case TAKEOVER:
          if (failed) throw value;
          if ((node.flags & TOOK_OVER) !== 0) {
            this.clock = 0;
            this.stage = ADOPTED_JOB;
            return adopt(run, node);
          }
          this.stage = ATTEMPTS;
          continue;
        case ADOPTED_JOB: {
          if (failed) throw value;
          this.adopted = value as Adopted | null;
          this.stage = ATTEMPTS;
          const v = run.store.sweep(node.path, this.adopted?.record.staged);
          if (isPromise(v)) return v;
          continue;
        }
        case ATTEMPTS: {
          if (failed) throw value;
          const adopted = this.adopted;
          if (adopted !== null) {
            this.attempt = adopted.record.attempt;
            this.firstStart = adopted.record.firstStart;
            this.attempts = [...adopted.record.attempts];
          }
          // After a takeover a dead runner's job record may be there: it goes before the commit, adopted or not.
          if ((node.flags & TOOK_OVER) !== 0) extOf(node).jobFile = Promise.resolve();
          this.stage = STAGE;
          continue;
        }
        case STAGE: {
          if (this.adopted !== null) {
            this.staged = this.adopted.record.staged as StagedAttempt;
            this.stage = RUN;
            continue;
          }
          this.stage = STAGED;
          let v: ReturnType<typeof run.store.stage>;
          try {
            v = run.store.stage(node.path, run.holder, this.attempt, this.staged);
          } catch (err) {
            throw namedCheckpointError(node.name, err);
          }
          if (isPromise(v)) {
            this.clock = 0;
            return v;
          }
          value = v;
          continue;
        }
        case STAGED:
          if (failed) throw namedCheckpointError(node.name, value);
          this.staged = value as StagedAttempt;
          this.stage = RUN;
          continue;
        case RUN: {
          const staged = this.staged as StagedAttempt;
          const accepted = run.registry.get(node.executor).capabilities.resumable ? jobRecorder(run, node, this.attempt, this.firstStart, this.attempts ?? [], staged) : undefined;
          const v = runAttempt(run, node, staged, this.attempt, this.adopted, this.clock, accepted);
          this.clock = 0;
          this.stage = RAN;
          if (isPromise(v)) return v;
          value = v;
          continue;
        }
        case RAN: {
          if (failed) throw value;
          const r = value as AttemptResult;
          this.r = r;
          // With the checkpoint directory, if the step opened it (a retry reuses it).
          this.staged = r.job.staged;
          if (this.firstStart === 0) this.firstStart = r.start;
          this.adopted = null;
          if (node.ext !== null) node.ext.job = null;
          const end = endOf(r);
          const decision =
            decideAtOnce(end) ??
            (end === 'preempted'
              ? decide({ end, infrastructure: r.status.infrastructure === true }, { attempts: this.attempt, infraRetries: this.infra, preemptions: this.preemptions }, { retries: node.spec.retries, infraRetries: run.config.infraRetries, preemptionRetries: preemptionRetriesOf(node.spec, run.config.preemptionRetries) })
              : decide({ end, infrastructure: r.status.infrastructure === true }, { attempts: this.attempt, infraRetries: this.infra, preemptions: this.preemptions }, { retries: node.spec.retries, infraRetries: run.config.infraRetries }));
          this.decision = decision;
          this.error = errorOf(node, r);
          this.stage = SAVED;
          // Secret values are masked in the error and the logs before anything records them.
          const masked = maskAttempt(run.config.secrets, this.error, this.staged as StagedAttempt);
          if (decision === 'succeed') {
            const staged = this.staged as StagedAttempt;
            if (isPromise(masked)) return masked.then(() => saveArtifact(node, r.status.result, staged));
            const v = saveArtifact(node, r.status.result, staged);
            if (isPromise(v)) return v;
          } else if (isPromise(masked)) return masked;
          continue;
        }
        case SAVED: {
          if (failed) throw value;
          const r = this.r as AttemptResult;
          const decision = this.decision as Decision;
          const staged = this.staged as StagedAttempt;
          if (decision === 'succeed' && this.attempts === null && this.attempt === 1 && !r.adopted && r.executor === node.executor) {
            recordValue(node, r.status.result, staged);
            if (node.ext !== null && node.ext.jobFile !== null) {
              this.afterJob = COMMIT_FIRST;
              this.stage = JOB_WRITTEN;
              return node.ext.jobFile;
            }
            this.stage = COMMIT_FIRST;
            continue;
          }
          const error = this.error;
          (this.attempts ??= []).push({
            attempt: this.attempt,
            start: r.start,
            end: r.end,
            state: endOf(r),
            ...(error !== undefined ? { error: errorData(error) } : {}),
            executor: r.executor,
            jobId: handleOf(r).jobId,
            host: thisHost(),
            ...(r.adopted ? { adopted: true } : {}),
          });
          if (decision === 'retry' || decision === 'retry-infra' || decision === 'retry-preempted') {
            if (decision === 'retry-infra') this.infra++;
            run.retrying(node, this.attempt, error);
            this.attempt++;
            this.stage = STAGE;
            // A preempted attempt's next one waits (the heartbeat keeps the lease meanwhile): a
            // preempted node or a reclaimed spot pool is rarely back at once.
            if (decision === 'retry-preempted') return delay(preemptionBackoffMs(++this.preemptions, run.config.preemptionBackoffMs));
            continue;
          }
          if (decision === 'abandon') {
            // The step's directory belongs to the new holder now: write nothing there.
            run.leases.forget(node);
            this.stage = ABANDONED;
            const v = run.store.abandon(staged);
            if (isPromise(v)) return v;
            continue;
          }
          if (node.ext !== null && node.ext.jobFile !== null) {
            this.afterJob = COMMIT_FULL;
            this.stage = JOB_WRITTEN;
            return node.ext.jobFile;
          }
          this.stage = COMMIT_FULL;
          continue;
        }
        case JOB_WRITTEN: {
          if (failed) throw value;
          // A job record never outlives its step's commit.
          this.stage = JOB_REMOVED;
          const v = run.store.removeJob(node.path);
          if (isPromise(v)) return v;
          continue;
        }
        case JOB_REMOVED:
          if (failed) throw value;
          this.stage = this.afterJob;
          continue;
        case COMMIT_FIRST: {
          const r = this.r as AttemptResult;
          this.outcome = 'succeeded';
          this.error = undefined;
          this.stage = COMMITTED;
          const v = commitStep(run, node, 'SUCCESS', firstTryRecord(node, r.start, r.end), this.staged as StagedAttempt);
          if (isPromise(v)) return v;
          continue;
        }
        case COMMIT_FULL: {
          const r = this.r as AttemptResult;
          const decision = this.decision as Decision;
          const status = decision === 'succeed' ? 'SUCCESS' : decision === 'cancel' ? 'CANCELLED' : 'FAILED';
          const staged = this.staged as StagedAttempt;
          const result = decision === 'succeed' ? recordValue(node, r.status.result, staged) : undefined;
          this.outcome = decision === 'succeed' ? 'succeeded' : decision === 'cancel' ? 'cancelled' : 'failed';
          this.stage = COMMITTED;
          const v = commitStep(run, node, status, fullRecord(node, status, this.attempts as AttemptRecord[], handleOf(r), this.error, result, this.firstStart, r.end), staged);
          if (isPromise(v)) return v;
          continue;
        }
        case COMMITTED:
          if (failed) throw value;
          run.ended(node, this.outcome, this.error);
          return this.end();
        case ABANDONED:
          if (failed) throw value;
          run.ended(node, 'failed', this.error);
          return this.end();
        case FAIL_COMMITTED:
          if (failed) {
            // The FAILED record could not be written: give the lease back.
            this.stage = FAIL_RELEASED;
            try {
              const v = run.leases.release(node);
              if (isPromise(v)) return v;
            } catch {
              // Nothing more to do: the lease goes stale and another run takes it over.
            }
            continue;
          }
          run.ended(node, 'failed', this.failure);
          return this.end();
        case FAIL_RELEASED:
          run.ended(node, 'failed', this.failure);
          return this.end();
        default:
          return undefined;
      }
    }
  }

  end(): undefined {
    this.stage = DONE;
    this.leased = false;
    this.run.lastEnded = this;
    return undefined;
  }

  /**
   * Lets go of the step, its attempt's job and result and its errors, once its run has ended
   * (shapes.ts keeps this lifecycle, and the shapes of its attempt result and job).
   */
  release(): void {
    this.node = null as unknown as Node;
    if (this.r !== undefined) this.r = releasedResult(this.r);
    this.adopted = null;
    this.attempts = null;
    this.error = undefined;
    this.failure = undefined;
  }

  /**
   * A store failure or a bug inside the lifecycle: record FAILED under the lease if that still
   * works, else give the lease back; the step fails with the original error either way. A lost
   * lease (the commit's fence refused) writes nothing. Returns what {@link step} returns.
   */
  failUnderLease(err: unknown): Promise<unknown> | Sync | undefined {
    const { run, node } = this;
    if (hasCode(err, 'CAIRN_LEASE_LOST')) {
      run.leases.forget(node);
      run.ended(node, 'failed', new CairnError('CAIRN_LEASE_LOST', `Step "${node.name}": ${err.message}`, { step: node.name, cause: err }));
      return this.end();
    }
    this.failure = err;
    if ((node.flags & LEASED) === 0) {
      run.ended(node, 'failed', err);
      return this.end();
    }
    this.stage = FAIL_COMMITTED;
    let v: unknown;
    try {
      const now = Date.now();
      v = commitStep(run, node, 'FAILED', fullRecord(node, 'FAILED', [], undefined, err, undefined, now, now), this.staged);
    } catch (e) {
      return { value: e, failed: true };
    }
    if (isPromise(v)) return v;
    return { value: v, failed: false };
  }
}

/** The answer of a stage that did not wait, handed back to {@link StepLifecycle.advance}. */
interface Sync {
  readonly value: unknown;
  readonly failed: boolean;
}

/** The wait between a preempted attempt and the next. */
function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function previousFailure(node: Node, status: string): CairnError {
  return new CairnError(
    'CAIRN_PREVIOUS_FAILURE',
    `Step "${node.name}" failed in an earlier run (status ${status} at ${node.path}). Fix it and rerun with forceRunFailed: true (cairn run --force-run-failed) to try it again.`,
    { step: node.name },
  );
}

/**
 * What a resumable executor's accepted job leaves: its job record, so that a runner taking the
 * lease over can adopt the job (a function of its own: a closure in the lifecycle would make
 * every step's lifecycle allocate the variables it captures).
 */
function jobRecorder(run: Run, node: Node, attempt: number, firstStart: number, attempts: readonly AttemptRecord[], staged: StagedAttempt): (handle: JobHandle, start: number) => void {
  return (handle, start) => {
    // The job's staged attempt: its task opened the checkpoint directory, which an adopter keeps.
    const record: JobRecord = { cairn: 1, executor: node.executor, job: handle, attempt, start: Date.now(), firstStart: firstStart !== 0 ? firstStart : start, attempts, host: thisHost(), runId: run.config.runId, staged: extOf(node).job?.staged ?? staged };
    extOf(node).jobFile = Promise.resolve(run.store.writeJob(node.path, record)).catch((err: unknown) => run.logger.warn(`Step ${node.name}: recording job ${handle.jobId} failed: ${String(err)}`));
  };
}

