/**
 * The end of a step that ran: its record and status published by the store's fenced commit (the
 * store checks the lease is still ours immediately before publishing, and publishes nothing
 * otherwise), and the lease released with it. Also DEP_FAILED, written under a lease for steps
 * whose dependency failed, so a concurrent runner's SUCCESS is never overwritten.
 */
import { CairnError, checkRecordable } from '@cairn/core';
import type { JobHandle } from '../executor/contract.js';
import { isPromise, type Maybe } from '../maybe.js';
import type { LeaseHolder } from '../store/leases.js';
import type { AttemptRecord, DeferredRecord } from '../store/records.js';
import type { StatusToken } from '../store/status.js';
import type { StagedAttempt, Store } from '../store/store.js';
import type { LeaseKeeper } from './leases.js';
import { HAS_RESULT, type Node, sinceEpoch } from './node.js';
import { jsonSafe, NOT_JSON, rebase, StepRecord } from './record.js';
import { keepsCheckpoints } from './step-options.js';

/** What a commit needs from its run. */
export interface CommitHost {
  readonly store: Store;
  readonly holder: LeaseHolder;
  readonly leases: LeaseKeeper;
  readonly logger: { warn(message: string): void };
}

/**
 * The recorded (JSON) form of a step's returned value, kept on the node: a value looks the same
 * whether it ran now or was cached. Paths into the attempt's staged directory are recorded as
 * paths into the output path (where they are after the commit).
 */
export function recordValue(node: Node, result: unknown, staged: StagedAttempt): unknown {
  // A value its kind saved into the output is not recorded (it need not be JSON).
  if (node.spec.artifact?.save !== undefined) result = undefined;
  // Not a warning: a value that is dropped would load differently once cached. (Nothing to
  // check in no value, the common case: the check allocates its walk's state on every call.)
  if (result !== undefined) checkRecordable(node.name, result);
  let value = jsonSafe(result);
  if (value === NOT_JSON) throw new CairnError('CAIRN_UNRECORDABLE_RESULT', `Step "${node.name}": its return value has no JSON form; return plain JSON.`, { step: node.name });
  else if (value !== undefined && staged.dir !== node.path && typeof value !== 'number' && typeof value !== 'boolean') value = rebase(value, staged.dir, node.path);
  node.result = value;
  node.flags |= HAS_RESULT;
  return value;
}

/**
 * Saves the value the step returned (if any) into its staged output with its artifact kind's
 * `save`, when the kind has one (in this process: kinds never travel). A failing save fails the step.
 */
export function saveArtifact(node: Node, result: unknown, staged: StagedAttempt): Maybe<void> {
  const kind = node.spec.artifact;
  // A step that returns nothing wrote its output itself.
  if (kind?.save === undefined || result === undefined) return undefined;
  const step = node.name;
  const failed = (err: unknown): never => {
    throw new CairnError('CAIRN_STORE', `Step "${step}": saving its "${kind.name}" artifact into ${staged.dir} failed: ${(err as Error)?.message ?? String(err)}`, { step, cause: err });
  };
  try {
    const done = kind.save(result, staged.dir);
    return isPromise(done) ? done.then(() => undefined, failed) : undefined;
  } catch (err) {
    return failed(err);
  }
}

/**
 * The record of a step that succeeded at its first attempt in this run: the node itself (it keeps
 * the times; see record.ts), so a store that keeps records in memory holds no extra object.
 */
export function firstTryRecord(node: Node, start: number, end: number): DeferredRecord {
  const epoch = node.stamp.epoch;
  node.t0 = sinceEpoch(start, epoch);
  node.t1 = sinceEpoch(end, epoch);
  return node;
}

/** Any other record: every attempt, the last handle, the error. */
export function fullRecord(node: Node, status: StatusToken, attempts: readonly AttemptRecord[], handle: JobHandle | undefined, error: unknown, value: unknown, start: number, end: number): DeferredRecord {
  return new StepRecord(node, status, attempts, handle, error, value, start, end);
}

/** Publishes `status` and `record` with `staged` under `node`'s lease, and releases the lease. */
export function commitStep(host: CommitHost, node: Node, status: StatusToken, record: DeferredRecord, staged: StagedAttempt | undefined): Maybe<void> {
  // A refresh in flight would write the lease back after the release.
  const refreshing = host.leases.quiesce(node);
  if (refreshing !== undefined) return publishAfter(refreshing, host, node, status, record, staged);
  return publish(host, node, status, record, staged);
}

async function publishAfter(refreshing: Promise<unknown>, host: CommitHost, node: Node, status: StatusToken, record: DeferredRecord, staged: StagedAttempt | undefined): Promise<void> {
  await refreshing;
  return publish(host, node, status, record, staged);
}

function publish(host: CommitHost, node: Node, status: StatusToken, record: DeferredRecord, staged: StagedAttempt | undefined): Maybe<void> {
  const done = host.store.commit(node.path, host.holder, staged !== undefined && keepsCheckpoints(node.spec) ? { status, record, staged, release: true, keepCheckpoints: true } : { status, record, staged, release: true });
  if (isPromise(done)) return published(host, node, done);
  host.leases.forget(node);
  return undefined;
}

/** The lease is gone with the commit (a function of its own: a closure in publish would make every call allocate what it captures). */
async function published(host: CommitHost, node: Node, done: Promise<void>): Promise<void> {
  await done;
  host.leases.forget(node);
}

/** Writes DEP_FAILED for `node` under a lease of its own, unless another runner built it meanwhile. */
export async function writeDepFailed(host: CommitHost, node: Node): Promise<void> {
  const { store, holder } = host;
  holder.timestamp = Date.now() / 1000;
  if (!(await store.createLease(node.path, holder))) return;
  try {
    const [st] = await store.readStates([node.path], false);
    if (st?.status !== 'SUCCESS') {
      await store.commit(node.path, holder, { status: 'DEP_FAILED', release: true });
      return;
    }
  } catch (err) {
    await Promise.resolve(store.releaseLease(node.path, holder)).catch(() => undefined);
    throw err;
  }
  await store.releaseLease(node.path, holder);
}
