/**
 * One step of a run. A run keeps every node to its end (and a MemoryStore keeps the nodes of
 * steps that succeeded as their deferred records), so a node is kept small: yes/no facts are bits
 * of `flags`, and what only some steps need is in `ext`, made on first use.
 */
import type { StepSpec } from '@cairn/core';
import type { StepState } from '../states.js';
import type { DeferredRecord } from '../store/records.js';
import type { Drift } from './drift.js';
import type { StoredState } from '../store/store.js';
import type { Job } from './job.js';

/** What every node of a run shares: the run id, its prefix, and the clock step times count from. */
export interface RunStamp {
  readonly runId: string;
  readonly prefix: string;
  /** Epoch ms that {@link Node.t0} and {@link Node.t1} count from (small integers, not boxed doubles). */
  readonly epoch: number;
}

/** Bits of {@link Node.flags}. */
export const SETTLED = 1; // reached its final state
export const BUILT = 2; // classified as built when expanded (cached, unless drift makes it fail)
export const HAS_RESULT = 4; // `result` is known
export const ACTIVE = 8; // its lifecycle is running (lease, attempts, commit)
export const HAS_SLOT = 16; // holds one of the run's slots (and its pool resources)
export const SAW_FOREIGN_LEASE = 32; // another runner held its lease at some point in this run
export const TOOK_OVER = 64; // this run took its lease over from a dead runner
export const LEASED = 128; // holds its lease now
export const BEATING = 256; // its lease is refreshed by the heartbeat (its lifecycle is waiting on something)
export const WAITING_LEASE = 512; // waits on another runner's lease (re-checked by the lease timer)
export const FORCED = 1024; // rebuilt whatever is stored (`rebuild`, or downstream of a rebuilt step)
export const DRIFTED = 2048; // built at a fixed path from another recipe than now (`ext.drift` says how)
export const ADOPTED = 4096; // an adopted artifact (`adopt()`): its source must exist before it is recorded
export const ADOPTED_DEP = 8192; // a dependency is an adopted artifact (set by wire): its source must exist before this step starts
export const UNCONFIRMED_DEP = 16384; // a dependency ended without a known result (served from the store; set by wire and dependents): confirm-deps.ts reads it

/** A node. Built by {@link newNode}: one object literal (V8 allocates long-lived literals straight into the old generation). */
export interface Node extends DeferredRecord {
  readonly spec: StepSpec;
  readonly path: string;
  readonly name: string;
  readonly stamp: RunStamp;
  state: StepState;
  /** {@link SETTLED}, {@link BUILT}, … */
  flags: number;
  /** Unfinished dependencies. */
  waiting: number;
  /** The first and last of the run's edges to the steps waiting on this one (-1: none; see dependents.ts). */
  firstEdge: number;
  lastEdge: number;
  /** The state read while expanding. */
  prior: StoredState | undefined;
  /** The recorded (JSON) value the step returned, once known ({@link HAS_RESULT}). */
  result: unknown;
  /** Registry key of its executor (set when validated). */
  executor: string;
  /** Start and end of its one attempt when it succeeded at the first try, ms after `stamp.epoch` (see commit.ts). */
  t0: number;
  t1: number;
  ext: NodeExt | null;
}

/** What only some nodes need. */
export interface NodeExt {
  /** What the step takes from the pools while it runs (null: nothing). */
  demand: Map<string, number> | null;
  /** The running attempt, while its lifecycle waits on it (cancel and lease loss abort it). */
  job: Job | null;
  /** When the heartbeat last refreshed the lease (epoch ms). */
  beatAt: number;
  /** An in-flight refresh of the lease. */
  refreshing: Promise<unknown> | null;
  /** How a {@link DRIFTED} step's recorded recipe differs from its spec. */
  drift: Drift | null;
  /** The writing of the step's job record (or, after a takeover, the dead runner's record): it is removed before the commit. */
  jobFile: Promise<unknown> | null;
}

/** A new node; `build` makes its record (commit.ts installs it). */
export function newNode(spec: StepSpec, path: string, stamp: RunStamp, build: (this: Node) => never | ReturnType<DeferredRecord['build']>): Node {
  return {
    spec,
    path,
    name: spec.name,
    stamp,
    state: 'pending',
    flags: spec.adoptedSource !== undefined ? ADOPTED : 0,
    waiting: 0,
    firstEdge: -1,
    lastEdge: -1,
    prior: undefined,
    result: undefined,
    executor: '',
    t0: 0,
    t1: 0,
    ext: null,
    build,
  };
}

/** The node's {@link NodeExt}, made now if it has none. */
export function extOf(node: Node): NodeExt {
  return (node.ext ??= { demand: null, job: null, beatAt: 0, refreshing: null, drift: null, jobFile: null });
}

/** The pool demand of `node`, if any. */
export function demandOf(node: Node): Map<string, number> | null {
  return node.ext === null ? null : node.ext.demand;
}

/** The step's `nameWithHash` (made when asked: few steps need it). */
export function keyOf(node: Node): string {
  return node.spec.nameWithHash;
}

/**
 * `time - epoch` (both epoch ms) kept as a small integer: the difference of two doubles is a
 * double, and a double stored in an object field is a separate 16-byte box per field.
 */
export function sinceEpoch(time: number, epoch: number): number {
  const d = time - epoch;
  return d >= 0 && d <= 0x3fffffff ? d | 0 : d;
}
