/**
 * Which ready steps start, and when: at most `maxConcurrent` hold a slot; a step's pool demand
 * (`gpu`, `memoryGb`, `cpu`, an executor's `maxConcurrency`) must fit what is free. The pump is a
 * loop with a re-entrancy flag: a step that finishes on the pump's own stack settles and flags
 * another pass, so a chain of a million synchronous steps keeps a flat stack. After ~20 ms of
 * back-to-back synchronous steps it yields to the event loop (signals, timers, I/O).
 */
import { CairnError, type Resources } from '@cairn/core';
import { isPromise, type Maybe } from '../maybe.js';
import { demandOf, HAS_SLOT, type Node, SETTLED } from './node.js';

/** What admission needs from its run. */
export interface AdmissionHost {
  readonly cancelled: boolean;
  /** Begins `node`'s lifecycle (which may finish, and settle, before it returns). */
  start(node: Node): void;
  /** Fails a step that can never be placed. */
  failStep(node: Node, error: unknown): void;
  /** Runs `pass` inside the run's async context (entered once per pump pass, not per step). */
  inContext(pass: () => void): void;
  /** Called once, before the first step (`node`) starts: may refuse (throws) or take time (a promise). */
  beforeFirstStart(node: Node): Maybe<void>;
  /** A failure of `beforeFirstStart`: the run stops. */
  fatal(error: unknown): void;
}

/** Steps started back to back before the pump checks whether to yield to the event loop. */
const BATCH = 1024;
/** Longest stretch of synchronous steps before the event loop gets a turn. */
const SLICE_MS = 20;

function gpuCount(g: Resources['gpus']): number {
  if (typeof g === 'number') return g;
  if (typeof g === 'object' && g !== null) return g.count ?? 0;
  return 0;
}

export class Admission {
  readonly #host: AdmissionHost;
  readonly #max: number;
  /**
   * Steps ready to start: `#ready[#head .. #tail)`. Its length is only its capacity: emptied by
   * resetting the indices, never shortened, so a run that fills and drains it chunk after chunk
   * does not grow a new array each time.
   */
  readonly #ready: Node[] = [];
  #head = 0;
  #tail = 0;
  /** Ready steps whose pool demand does not fit yet. */
  readonly #blocked: Node[] = [];
  readonly #free = new Map<string, number>();
  readonly #cap = new Map<string, number>();
  #running = 0;
  #pumping = false;
  #again = false;
  #deferred = false;
  #sliceStart = 0;
  #count = 0;
  /** `beforeFirstStart`: 0 not yet, 1 in progress, 2 done. */
  #gate = 0;
  /** Wakes the puller waiting for room in the ready queue. */
  #room: (() => void) | undefined;
  /** {@link #passes}, bound once: an arrow in `pump` would make every call (most only flag another pass) allocate a context for `this`. */
  readonly #passesBound = (): void => this.#passes();

  constructor(host: AdmissionHost, maxConcurrent: number, pools: Readonly<Record<string, number>>) {
    this.#host = host;
    this.#max = maxConcurrent;
    for (const [k, v] of Object.entries(pools)) {
      this.#cap.set(k, v);
      this.#free.set(k, v);
    }
  }

  /** Steps holding a slot. */
  get running(): number {
    return this.#running;
  }

  /** Steps queued ready. */
  get queued(): number {
    return this.#tail - this.#head;
  }

  /** Resolves once fewer than `maxConcurrent` steps are queued (the puller's backpressure). */
  /** Lets go of the steps its queues still point at (the run has ended: see shapes.ts). */
  clear(): void {
    this.#ready.length = 0;
    this.#blocked.length = 0;
    this.#head = this.#tail = 0;
  }

  room(): Promise<void> | undefined {
    if (this.#tail - this.#head < this.#max) return undefined;
    return new Promise((resolve) => (this.#room = resolve));
  }

  /** Lets a waiting puller go (cancellation). */
  wake(): void {
    const room = this.#room;
    this.#room = undefined;
    room?.();
  }

  /** What `node` takes from the pools while it runs (null: nothing), for executor `name` with `maxConcurrency`. */
  demand(resources: Resources | undefined, name: string, maxConcurrency: number | undefined): Map<string, number> | null {
    let demand: Map<string, number> | null = null;
    const add = (k: string, v: number) => {
      if (v > 0 && this.#cap.has(k)) (demand ??= new Map()).set(k, v);
    };
    if (resources) {
      add('gpu', gpuCount(resources.gpus));
      add('memoryGb', resources.memoryGb ?? 0);
      add('cpu', resources.cpu ?? 0);
    }
    if (maxConcurrency !== undefined) {
      const key = `executor:${name}`;
      if (!this.#cap.has(key)) {
        this.#cap.set(key, maxConcurrency);
        this.#free.set(key, maxConcurrency);
      }
      add(key, 1);
    }
    return demand;
  }

  /** `node` is ready to start. */
  enqueue(node: Node): void {
    this.#ready[this.#tail++] = node;
  }

  /** Gives back `node`'s slot and pool share (the caller pumps: a settle does). */
  release(node: Node): void {
    if ((node.flags & HAS_SLOT) === 0) return;
    node.flags &= ~HAS_SLOT;
    this.#running--;
    const demand = demandOf(node);
    if (demand !== null) for (const [k, v] of demand) this.#free.set(k, (this.#free.get(k) as number) + v);
  }

  /** Starts what fits. A re-entrant call only flags another pass. */
  pump(): void {
    if (this.#pumping) {
      this.#again = true;
      return;
    }
    if (this.#host.cancelled || this.#gate === 1) return;
    this.#pumping = true;
    this.#sliceStart = performance.now();
    this.#count = 0;
    try {
      if (this.#head < this.#tail || this.#blocked.length > 0) this.#host.inContext(this.#passesBound);
    } finally {
      this.#pumping = false;
    }
  }

  #passes(): void {
    do {
      this.#again = false;
      this.#pass();
    } while (this.#again && !this.#host.cancelled);
  }

  /** True (and a later pass scheduled) when synchronous steps have held the event loop long enough. */
  #sliceOver(): boolean {
    this.#count = 0;
    if (performance.now() - this.#sliceStart < SLICE_MS) return false;
    if (!this.#deferred) {
      this.#deferred = true;
      setImmediate(() => {
        this.#deferred = false;
        this.pump();
      });
    }
    return true;
  }

  #pass(): void {
    const max = this.#max;
    for (let i = 0; i < this.#blocked.length && this.#running < max; ) {
      const node = this.#blocked[i] as Node;
      if ((node.flags & SETTLED) !== 0) this.#blocked.splice(i, 1);
      else if (this.#fits(demandOf(node) as Map<string, number>)) {
        if (!this.#start(node)) return;
        this.#blocked.splice(i, 1);
      } else i++;
    }
    while (this.#running < max && this.#head < this.#tail) {
      if (this.#host.cancelled) return;
      if (++this.#count >= BATCH && this.#sliceOver()) {
        this.#again = false;
        break;
      }
      const node = this.#ready[this.#head++] as Node;
      if ((node.flags & SETTLED) !== 0) continue;
      const d = demandOf(node);
      if (d !== null) {
        const impossible = this.#impossible(d);
        if (impossible !== undefined) {
          this.#host.failStep(node, new CairnError('CAIRN_CONFIG', `Step "${node.name}" can never be placed (${impossible}). Lower its resources or enlarge the pool.`, { step: node.name }));
          continue;
        }
        if (!this.#fits(d)) {
          this.#blocked.push(node);
          continue;
        }
      }
      if (!this.#start(node)) {
        this.#head--; // not started: it stays first in line
        return;
      }
    }
    if (this.#head === this.#tail) this.#head = this.#tail = 0;
    else if (this.#head > 1024 && this.#head * 2 > this.#tail) {
      this.#ready.copyWithin(0, this.#head, this.#tail);
      this.#tail -= this.#head;
      this.#head = 0;
    }
    if (this.#room !== undefined && this.#tail - this.#head < max) this.wake();
  }

  #impossible(demand: Map<string, number>): string | undefined {
    for (const [k, v] of demand) if ((this.#cap.get(k) as number) < v) return `${k}: needs ${v}, the pool has ${this.#cap.get(k)}`;
    return undefined;
  }

  #fits(demand: Map<string, number>): boolean {
    for (const [k, v] of demand) if ((this.#free.get(k) as number) < v) return false;
    return true;
  }

  /** Takes a slot and begins `node`'s lifecycle; false when the first-start gate must finish first. */
  #start(node: Node): boolean {
    if (this.#gate !== 2 && !this.#passGate(node)) return false;
    this.#running++;
    node.flags |= HAS_SLOT;
    const demand = demandOf(node);
    if (demand !== null) for (const [k, v] of demand) this.#free.set(k, (this.#free.get(k) as number) - v);
    this.#host.start(node);
    return true;
  }

  /** Runs `beforeFirstStart` once: true when passed now; false while it is in progress or when it failed. */
  #passGate(node: Node): boolean {
    if (this.#gate === 1) return false;
    this.#gate = 1;
    let r: Maybe<void>;
    try {
      r = this.#host.beforeFirstStart(node);
    } catch (err) {
      this.#host.fatal(err);
      return false;
    }
    if (!isPromise(r)) {
      this.#gate = 2;
      return true;
    }
    r.then(
      () => {
        this.#gate = 2;
        this.pump();
      },
      (err: unknown) => this.#host.fatal(err),
    );
    return false;
  }
}
