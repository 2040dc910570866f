/**
 * Who waits on whom, and what a step's end means for them. Completion is counted, not awaited:
 * each step holds the number of its unfinished dependencies; a step that settles decrements its
 * dependents', starts those that reach zero, and makes those of a failed step dep-failed. Settling
 * is iterative (settles made while propagating wait in a queue), so a failure at the root of a
 * long chain settles every dependent without recursion.
 */
import { CairnError } from '@cairn/core';
import { isOkState, type FinalStepState, type StepState } from '../states.js';
import { HAS_RESULT, type Node, SETTLED, UNCONFIRMED_DEP } from './node.js';

/** What a settle or event says besides the state. */
export interface SettleExtra {
  readonly error?: unknown;
  readonly message?: string;
  readonly attempt?: number;
  readonly logs?: { readonly stdout: string; readonly stderr: string };
}

/** The `extra` of a settle that has no error or message (shared: most have none). */
export const NO_EXTRA: SettleExtra = Object.freeze({});

/** What settling needs from its run. */
export interface SettleHost {
  /** Counts a settled step and reports it. */
  settled(node: Node, state: FinalStepState, extra: SettleExtra): void;
  /** A dependent whose dependencies all succeeded is ready. */
  ready(node: Node): void;
  /** A dependent of a failed step: it records DEP_FAILED (unless the failure was a cancellation). */
  depFailed(node: Node, dep: Node): void;
  /** The run is being cancelled: dependents become cancelled, not dep-failed. */
  readonly cancelled: boolean;
  /** Called once a settle (and everything it propagated) is done. */
  afterSettle(): void;
}

/**
 * The run's dependents, as linked lists of edges rather than an array per step: edge `e` leads to
 * the step `#to[e]`, and `#next[e]` is the next edge of the same dependency (-1: the last). A
 * settled step's edges go to a free list, so the tables hold at most the edges of unsettled steps
 * at the busiest moment ("scheduler overhead" bench row: an array per step was a large share of
 * a 100k run's garbage).
 */
export class Dependents {
  readonly #host: SettleHost;
  readonly #to: (Node | undefined)[] = [];
  #next = new Int32Array(1024);
  #free = -1;
  readonly #queue: unknown[] = [];
  #settling = false;

  constructor(host: SettleHost) {
    this.#host = host;
  }

  /** Lets go of the edge tables (the run has ended: see shapes.ts). */
  clear(): void {
    this.#to.length = 0;
    this.#next = new Int32Array(1024);
    this.#free = -1;
    this.#queue.length = 0;
  }

  /** `node` waits on `dep` (which has not settled). */
  link(dep: Node, node: Node): void {
    let e = this.#free;
    if (e >= 0) this.#free = this.#next[e] as number;
    else {
      e = this.#to.length;
      if (e === this.#next.length) {
        const bigger = new Int32Array(2 * e);
        bigger.set(this.#next);
        this.#next = bigger;
      }
      this.#to.push(undefined);
    }
    this.#to[e] = node;
    this.#next[e] = -1;
    if (dep.lastEdge < 0) dep.firstEdge = e;
    else this.#next[dep.lastEdge] = e;
    dep.lastEdge = e;
    node.waiting++;
  }

  /** Settles `node` in `state` and propagates to its dependents. A no-op for a settled node. */
  settle(node: Node, state: FinalStepState, extra: SettleExtra): void {
    if ((node.flags & SETTLED) !== 0) return;
    node.flags |= SETTLED;
    node.state = state;
    if (this.#settling) {
      this.#queue.push(node, extra);
      return;
    }
    this.#settling = true;
    const queue = this.#queue;
    try {
      this.#propagate(node, extra);
      for (let i = 0; i < queue.length; i += 2) this.#propagate(queue[i] as Node, queue[i + 1] as SettleExtra);
    } finally {
      if (queue.length > 0) queue.length = 0;
      this.#settling = false;
    }
    this.#host.afterSettle();
  }

  #propagate(node: Node, extra: SettleExtra): void {
    const state = node.state as FinalStepState;
    this.#host.settled(node, state, extra);
    let e = node.firstEdge;
    if (e < 0) return;
    node.firstEdge = node.lastEdge = -1;
    const ok = isOkState(state);
    // Served from the store (cached, built elsewhere): its dependents read its result before they run.
    const unconfirmed = ok && (node.flags & HAS_RESULT) === 0;
    const to = this.#to;
    const next = this.#next;
    do {
      const d = to[e] as Node;
      const after = next[e] as number;
      // The edge goes back to the free list before `d` is told (nothing adds edges meanwhile).
      to[e] = undefined;
      next[e] = this.#free;
      this.#free = e;
      if (unconfirmed) d.flags |= UNCONFIRMED_DEP;
      this.#notify(d, node, ok);
      e = after;
    } while (e >= 0);
  }

  /** Tells `d` that its dependency `dep` settled. */
  #notify(d: Node, dep: Node, ok: boolean): void {
    if ((d.flags & SETTLED) !== 0) return;
    const host = this.#host;
    if (ok) {
      if (--d.waiting === 0) {
        if (host.cancelled) this.settle(d, 'cancelled', NO_EXTRA);
        else host.ready(d);
      }
    } else if (dep.state === 'cancelled' || host.cancelled) this.settle(d, 'cancelled', NO_EXTRA);
    else {
      this.settle(d, 'dep-failed', { message: `dependency ${dep.name} ${dep.state}`, error: depFailedError(d, dep) });
      host.depFailed(d, dep);
    }
  }
}

/** The error of a step that did not run because `dep` did not succeed. */
export function depFailedError(node: Node, dep: Node): CairnError {
  return new CairnError('CAIRN_DEP_FAILED', `Step "${node.name}" did not run: its dependency "${dep.name}" ${dep.state as StepState}.`, { step: node.name });
}
