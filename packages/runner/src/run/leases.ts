/**
 * The run's side of leases: acquiring a step's lease (or waiting on, or taking over, another
 * runner's), refreshing the leases of steps that wait on something (one timer for all), noticing
 * a lost lease (taken over, removed, unwritable) and aborting its attempt, and re-checking the
 * steps that wait on another runner. The store keeps the lease (store/store.ts); its commit
 * checks the lease once more right before publishing.
 */
import { CairnError } from '@cairn/core';
import { drive, isPromise, type Maybe } from '../maybe.js';
import { judgeLease, type LeaseHolder, type LeaseInfo, type LeaseTiming } from '../store/leases.js';
import type { Store, StoredState } from '../store/store.js';
import { usable } from './classify.js';
import { BEATING, extOf, FORCED, LEASED, type Node, SAW_FOREIGN_LEASE, SETTLED, TOOK_OVER, WAITING_LEASE } from './node.js';

/** How acquiring a lease ended. */
export type Acquired =
  /** The lease is ours: run the step. */
  | 'acquired'
  /** A live runner holds it: wait ({@link LeaseKeeper.wait}). */
  | 'held'
  /** Built by another runner meanwhile (found under our lease, which is given back). */
  | 'done';

/** What the lease keeper needs from its run. */
export interface LeaseHost {
  readonly store: Store;
  readonly timing: LeaseTiming;
  readonly holder: LeaseHolder;
  readonly logger: { warn(message: string): void };
  /** A waiting step was built by the other runner. */
  builtElsewhere(node: Node): void;
  /** A waiting step may be tried again (the other runner let go). */
  retry(node: Node): void;
}

export class LeaseKeeper {
  readonly #host: LeaseHost;
  /** Steps whose leases the heartbeat refreshes. */
  readonly #held = new Set<Node>();
  /** Steps waiting on another runner's lease. */
  readonly #waiting = new Set<Node>();
  #heartbeat: NodeJS.Timeout | undefined;
  #recheck: NodeJS.Timeout | undefined;
  #beating = false;
  #rechecking = false;
  /** Leases already reported for a timestamp in the future (by location and content). */
  readonly #reportedAhead = new Set<string>();

  constructor(host: LeaseHost) {
    this.#host = host;
  }

  /** Tries to take `node`'s lease, stamped `now` (epoch ms); re-reads its state under the lease. */
  acquire(node: Node, now: number): Maybe<Acquired> {
    const { store, holder } = this.#host;
    holder.timestamp = now / 1000;
    const created = store.createLease(node.path, holder);
    if (created === true) return this.#underLease(node);
    if (created === false) return drive(this.#contended(node));
    return this.#created(node, created);
  }

  // Promise continuations are methods of their own: a closure in acquire or #underLease would
  // make every call allocate the variables it captures, promise or not.
  async #created(node: Node, created: Promise<boolean>): Promise<Acquired> {
    return (await created) ? this.#underLease(node) : drive(this.#contended(node));
  }

  #underLease(node: Node): Maybe<Acquired> {
    node.flags |= LEASED;
    // Another runner may have finished the step between our read of its state and our lease
    // (a mutable or forced step is rebuilt anyway, unless another runner was seen on it in this run).
    if ((node.spec.mutable || (node.flags & FORCED) !== 0) && (node.flags & SAW_FOREIGN_LEASE) === 0) return 'acquired';
    const st = this.#host.store.readStates([node.path], true);
    return isPromise(st) ? this.#verdictOf(node, st) : this.#verdict(node, st);
  }

  async #verdictOf(node: Node, states: Promise<StoredState[]>): Promise<Acquired> {
    return this.#verdict(node, await states);
  }

  #verdict(node: Node, states: StoredState[]): Maybe<Acquired> {
    if (!usable(node.spec, node.path, states[0] as StoredState)) return 'acquired';
    const released = this.release(node);
    return isPromise(released) ? released.then(() => 'done' as const) : 'done';
  }

  /** Someone else's lease is in the way: wait on a live one, take a stale one over. */
  *#contended(node: Node): Generator<unknown, Acquired, unknown> {
    const { store, holder, timing, logger } = this.#host;
    for (let tries = 0; tries < 4; tries++) {
      const info = (yield store.readLease(node.path)) as LeaseInfo | null;
      if (info !== null) {
        const verdict = this.#judge(node, info);
        if (!verdict.stale) {
          node.flags |= SAW_FOREIGN_LEASE;
          return 'held';
        }
        const who = info.holder === null ? `an unreadable lease (${info.location ?? node.path}: ${JSON.stringify(info.raw.slice(0, 40))})` : `the stale lease of ${info.holder.worker_id}`;
        const why = verdict.reason === 'dead' ? ' (its process is gone)' : verdict.reason === 'old' ? ` (not rewritten for ${timing.staleMs} ms)` : '';
        logger.warn(`Step ${node.name}: taking over ${who} at ${node.path}${why}.`);
        if ((yield store.breakLease(node.path, info)) as boolean) node.flags |= TOOK_OVER;
      }
      holder.timestamp = Date.now() / 1000;
      if ((yield store.createLease(node.path, holder)) as boolean) return (yield this.#underLease(node)) as Acquired;
    }
    node.flags |= SAW_FOREIGN_LEASE;
    return 'held';
  }

  /** Judges another runner's lease on `node`, reporting (once) a holder's timestamp in the future. */
  #judge(node: Node, info: LeaseInfo) {
    const { timing, logger } = this.#host;
    const verdict = judgeLease(info, timing.staleMs, Date.now(), timing.unreadableGraceMs);
    const key = `${info.location ?? node.path}\n${info.raw}`;
    if (verdict.aheadMs > 0 && !this.#reportedAhead.has(key)) {
      this.#reportedAhead.add(key);
      logger.warn(
        `Step ${node.name}: the lease ${info.location ?? node.path} of ${info.holder?.worker_id ?? 'another runner'} carries a timestamp ${Math.round(verdict.aheadMs / 1000)} s in the future of the store's clock; it is judged by its age on the store instead. Check the clocks of the hosts sharing this store (NTP).`,
      );
    }
    return verdict;
  }

  /** Gives `node`'s lease back (only if still ours). */
  release(node: Node): Maybe<void> {
    if ((node.flags & LEASED) === 0) return undefined;
    node.flags &= ~LEASED;
    this.drop(node);
    return this.#host.store.releaseLease(node.path, this.#host.holder);
  }

  /** The lease is no longer ours (committed with release, or lost). */
  forget(node: Node): void {
    node.flags &= ~LEASED;
    this.drop(node);
  }

  /** `node`'s lifecycle waits on something while holding the lease: the heartbeat refreshes it. */
  hold(node: Node): void {
    if ((node.flags & (BEATING | LEASED)) !== LEASED) return;
    node.flags |= BEATING;
    extOf(node).beatAt = Date.now();
    this.#held.add(node);
    // Ref'd: while a step holds a lease the run is alive, even if the step waits on nothing else.
    this.#heartbeat ??= setInterval(() => void this.#beat(), this.#host.timing.heartbeatMs);
  }

  /** Stops refreshing `node`'s lease. */
  drop(node: Node): void {
    if ((node.flags & BEATING) === 0) return;
    node.flags &= ~BEATING;
    this.#held.delete(node);
  }

  /** Before a commit or release: no refresh of `node`'s lease may still be in flight (it would write the lease back). */
  quiesce(node: Node): Promise<unknown> | undefined {
    this.drop(node);
    const r = node.ext?.refreshing;
    return r === null ? undefined : r;
  }

  async #beat(): Promise<void> {
    if (this.#beating) return;
    this.#beating = true;
    try {
      this.#host.holder.timestamp = Date.now() / 1000;
      await Promise.all([...this.#held].map((node) => this.#refresh(node)));
    } finally {
      this.#beating = false;
    }
  }

  #refresh(node: Node): Promise<unknown> {
    const { store, holder, timing, logger } = this.#host;
    const ext = extOf(node);
    const p: Promise<unknown> = Promise.resolve()
      .then(() => store.refreshLease(node.path, holder))
      .then(
        (ours) => {
          if (ours) ext.beatAt = Date.now();
          else return this.#lost(node, undefined);
          return undefined;
        },
        (err: unknown) => {
          // Unwritable: the lease goes stale unless a later beat gets through in time.
          if (Date.now() - ext.beatAt + timing.heartbeatMs >= timing.staleMs) return this.#lost(node, err);
          logger.warn(`Step ${node.name}: refreshing its lease failed (${(err as Error).message}); trying again in ${timing.heartbeatMs} ms.`);
          return undefined;
        },
      )
      .finally(() => {
        if (ext.refreshing === p) ext.refreshing = null;
      });
    ext.refreshing = p;
    return p;
  }

  /** The lease is gone: stop the step (its commit would be refused anyway) with CAIRN_LEASE_LOST. */
  async #lost(node: Node, cause: unknown): Promise<void> {
    if ((node.flags & (LEASED | SETTLED)) !== LEASED) return;
    this.forget(node);
    let now = 'it could not be refreshed in time';
    if (cause === undefined) {
      const info = await Promise.resolve(this.#host.store.readLease(node.path)).catch(() => null);
      now = info === null ? 'it was removed' : info.holder === null ? 'it was overwritten with something unreadable' : `another runner (${info.holder.worker_id}) took it over`;
    }
    const err = new CairnError('CAIRN_LEASE_LOST', `Step "${node.name}": its lease at ${node.path} is no longer this runner's (${now}); the step was stopped and nothing of it is committed.`, { step: node.name, cause });
    node.ext?.job?.abort(err);
  }

  /** `node` waits on another runner's lease; re-checked every `pollMs` without holding a slot. */
  wait(node: Node): void {
    node.flags |= WAITING_LEASE;
    this.#waiting.add(node);
    // Ref'd on purpose: while a step waits on another runner, this timer is the run's only pending work.
    this.#recheck ??= setInterval(() => void this.#recheckAll(), this.#host.timing.pollMs);
  }

  async #recheckAll(): Promise<void> {
    if (this.#rechecking) return;
    this.#rechecking = true;
    const { store, timing, logger } = this.#host;
    try {
      const nodes = [...this.#waiting];
      const states = await store.readStates(
        nodes.map((n) => n.path),
        true,
      );
      for (let i = 0; i < nodes.length; i++) {
        const node = nodes[i] as Node;
        if ((node.flags & SETTLED) !== 0) {
          this.#unwait(node);
          continue;
        }
        if ((node.flags & FORCED) === 0 && usable(node.spec, node.path, states[i] as StoredState)) {
          this.#unwait(node);
          this.#host.builtElsewhere(node);
          continue;
        }
        const info = await store.readLease(node.path);
        if (info === null || this.#judge(node, info).stale) {
          this.#unwait(node);
          this.#host.retry(node);
        }
      }
    } catch (err) {
      logger.warn(`Re-checking leases failed: ${String(err)}`);
    } finally {
      this.#rechecking = false;
      if (this.#waiting.size === 0) {
        clearInterval(this.#recheck);
        this.#recheck = undefined;
      }
    }
  }

  #unwait(node: Node): void {
    node.flags &= ~WAITING_LEASE;
    this.#waiting.delete(node);
  }

  /** Stops the timers (the run ended). */
  close(): void {
    clearInterval(this.#heartbeat);
    clearInterval(this.#recheck);
    this.#heartbeat = this.#recheck = undefined;
  }
}
