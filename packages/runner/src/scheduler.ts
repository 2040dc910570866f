/**
 * One run of the StepRunner: eager pulling, expansion with pruning, event-driven completion.
 *
 * Everything is keyed by output path. Completion is counted, not awaited: each step holds the
 * number of unfinished dependencies and its dependents; a finishing step decrements its
 * dependents and queues those that reach zero. Slots (`maxConcurrent`), pools and executor
 * concurrency are counters too. The only timers are one lease heartbeat, one re-check of
 * foreign leases while any step waits on one, and per-step timeouts where declared.
 */
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import {
  type ArtifactStep,
  CairnError,
  computeIdentities,
  describeDrift,
  formatFnRef,
  isArtifactStep,
  isCairnError,
  lower,
  resolveFnRef,
  resolveInputs,
  StepSpec,
  type Resources,
  type TaskPayload,
} from '@cairn/core';
import { anchor } from './anchor.js';
import { clientStorage, type ExecutorClient } from './context.js';
import { PathIndex } from './path-index.js';
import { StepRunError, type StepFailure } from './errors.js';
import type { Executor, JobHandle, JobRequest, JobStatus } from './executor.js';
import type { FinalStepState, RunnerEvent, StepState } from './events.js';
import { ExecutorRegistry } from './registry.js';
import { isStale, type LeaseHolder, makeHolder, thisHost } from './store/leases.js';
import { type ArtifactRecord, type AttemptRecord, type DeferredRecord, errorData, type JobRecord } from './store/records.js';
import type { StatusToken } from './store/status.js';
import { MemoryStore } from './store/memory.js';
import type { AttemptFiles, Store, StoredState, SyncStoreOps } from './store/store.js';

/** A step as the caller may pass it. */
export type StepInput = StepSpec | ArtifactStep<unknown>;

/** The runner's logger. */
export interface RunnerLogger {
  /** Progress. */
  info(message: string): void;
  /** Something to look at (drift, corrupt files). */
  warn(message: string): void;
  /** A failure. */
  error(message: string): void;
}

/** How a step ended in a run (see {@link StepState}). */
export interface StepOutcome {
  /** Step name. */
  readonly name: string;
  /** Output path. */
  readonly path: string;
  /** Final state. */
  readonly state: StepState;
  /** The returned value as recorded (its JSON form), when the step ran in this run. */
  readonly result: unknown;
  /** Whether `result` is known (false for cached steps: read it from the record). */
  readonly hasResult: boolean;
}

/** What a finished run reports. */
export interface RunSummary {
  /** The run's id. */
  readonly runId: string;
  /** Store prefix used. */
  readonly prefix: string;
  /** Steps by final state. */
  readonly counts: Readonly<Partial<Record<StepState, number>>>;
  /** The outcome of a step (by spec or output path). */
  outcome(step: StepSpec | string): StepOutcome | undefined;
}

/** @internal Everything a run needs from its runner. */
export interface RunConfig {
  readonly runId: string;
  readonly store: Store;
  readonly prefix: string;
  readonly maxConcurrent: number;
  readonly pools: Readonly<Record<string, number>>;
  readonly registry: ExecutorRegistry;
  readonly defaultExecutor: string;
  readonly remoteExecutor: string | undefined;
  readonly forceRunFailed: boolean;
  readonly signal: AbortSignal | undefined;
  readonly handleSigint: boolean;
  readonly emit: ((event: RunnerEvent) => void) | undefined;
  readonly logger: RunnerLogger;
  readonly heartbeatMs: number;
  readonly staleMs: number;
  readonly pollMs: number;
  readonly client: ExecutorClient;
}

/** Dependencies' output paths and returned values, keyed by `nameWithHash`. */
interface DepInputs {
  depPaths: Record<string, string>;
  depResults: Record<string, unknown>;
}

const SETTLED_OK: ReadonlySet<StepState> = new Set(['succeeded', 'cached', 'skipped']);
const INFRA_RETRIES = 3;

/** What every step's record shares with its run: the run id, and the clock the step times count from. */
interface RunStamp {
  readonly runId: string;
  /** The run's store prefix (a deferred record's dependency paths are made from it). */
  readonly prefix: string;
  /** Epoch ms that {@link Node.t0} and {@link Node.t1} count from (small integers, not boxed doubles). */
  readonly epoch: number;
}

/** Bits of {@link Node.flags}. */
const SETTLED = 1; // reached its final state
const BUILT = 2; // recorded SUCCESS when expanded (cached, unless drift makes it fail)
const HAS_RESULT = 4; // `result` is known
const ACTIVE = 8; // a launch is in progress (lease, attempts, commit)
const HAS_SLOT = 16; // holds one of the run's `maxConcurrent` slots (and its pool resources)
const FAST = 32; // its executor can run it on the runner's stack (`runSync`) and it has no timeout
const SAW_FOREIGN_LEASE = 64; // another runner held its lease at some point in this run
const TOOK_OVER = 128; // this run took the lease over from a dead runner: a job it recorded may still run

/**
 * One step of a run: a plain object made by {@link newNode}. It is also the deferred record of a
 * step that succeeded on the synchronous path (`build`): a store that keeps records in memory
 * holds the node, not a copy. A run keeps every node to its end (and a MemoryStore after it), so
 * it is kept small: yes/no facts are bits of `flags`, and what only some steps need (pool
 * demand, the general path's lease, controller and job file) is in `ext`, made on first use.
 */
interface Node extends DeferredRecord {
  readonly spec: StepSpec;
  readonly path: string;
  readonly name: string;
  readonly stamp: RunStamp;
  state: StepState;
  /** {@link SETTLED}, {@link BUILT}, … */
  flags: number;
  /** Unfinished dependencies. */
  waiting: number;
  /** The first and last of the run's edges to the steps waiting on this one (-1: none; see `Run.#edgeTo`). */
  firstEdge: number;
  lastEdge: number;
  /** The state read while expanding. */
  prior: StoredState | undefined;
  result: unknown;
  executor: string;
  /** Start and end of the one synchronous attempt, ms after `stamp.epoch`. */
  t0: number;
  t1: number;
  ext: NodeExt | null;
}

/** What only some steps need ({@link extOf} makes it). */
interface NodeExt {
  /** What the step takes from the pools while it runs (null: nothing). */
  demand: Map<string, number> | null;
  /** Aborts the running attempt of the general path. */
  controller: { abort(reason?: unknown): void } | null;
  /** The lease holder while the general path holds the step's lease. */
  holder: LeaseHolder | null;
  /** An in-flight lease refresh, awaited before the lease is released. */
  refreshing: Promise<void> | null;
  /** The step has a `.cairn/job.json` (the write, when in flight): removed before the commit. */
  jobFile: Promise<void> | null;
}

/**
 * A new node. One object literal, not a class instance: a run keeps every node until it ends,
 * and V8 allocates a literal whose allocation site has seen nearly all its objects survive
 * straight into the old generation. Class instances are always made young and copied out of the
 * young generation twice, which was most of a large run's GC time.
 */
function newNode(spec: StepSpec, path: string, stamp: RunStamp): Node {
  return {
    spec,
    path,
    name: spec.name,
    stamp,
    state: 'pending',
    flags: 0,
    waiting: 0,
    firstEdge: -1,
    lastEdge: -1,
    prior: undefined,
    result: undefined,
    executor: '',
    t0: 0,
    t1: 0,
    ext: null,
    build: buildNodeRecord,
  };
}

/** The node's {@link NodeExt}, made now if it has none. */
function extOf(node: Node): NodeExt {
  return (node.ext ??= { demand: null, controller: null, holder: null, refreshing: null, jobFile: null });
}

/** The general path's lease holder of `node`, if any. */
function holderOf(node: Node): LeaseHolder | null {
  return node.ext === null ? null : node.ext.holder;
}

/** The pool demand of `node`, if any. */
function demandOf(node: Node): Map<string, number> | null {
  return node.ext === null ? null : node.ext.demand;
}

/** What {@link RunSummary.outcome} reports of a node. */
function outcomeOf(node: Node | undefined): StepOutcome | undefined {
  if (node === undefined) return undefined;
  return { name: node.name, path: node.path, state: node.state, result: node.result, hasResult: (node.flags & HAS_RESULT) !== 0 };
}

/** `Node.build`: the record of a step that succeeded on the synchronous path (committed deferred by {@link Run}). */
function buildNodeRecord(this: Node): ArtifactRecord {
  const { runId, epoch } = this.stamp;
  return buildRecord(runId, this, 'SUCCESS', null, this.executor, undefined, this.result, epoch + this.t0, epoch + this.t1);
}

/**
 * `time - epoch` (both epoch ms) kept as a small integer: the difference of two doubles is a
 * double, and a double stored in an object field is a separate 16-byte box per field.
 */
function sinceEpoch(time: number, epoch: number): number {
  const d = time - epoch;
  return d >= 0 && d <= 0x3fffffff ? d | 0 : d;
}

/** The step's `nameWithHash` (made when asked: few steps need it). */
function keyOf(node: Node): string {
  return node.spec.nameWithHash;
}

function hasResources(spec: StepSpec): boolean {
  const r = spec.resources;
  return r !== undefined && Object.keys(r).length > 0;
}

function gpuCount(g: unknown): number {
  if (typeof g === 'number') return g;
  if (typeof g === 'object' && g !== null) return (g as { count?: number }).count ?? 0;
  return 0;
}

/** The first attempt of a step started on the synchronous path, handed over to the general one. */
interface FirstAttempt {
  readonly inputs: DepInputs;
  readonly ac: AbortController;
  readonly start: number;
  readonly status: JobStatus | Promise<JobStatus>;
  readonly handle: JobHandle;
}

/** `runSync` called as a method of `executor` (for AsyncLocalStorage.run, without a closure). */
function callRunSync(executor: Executor, runSync: NonNullable<Executor['runSync']>, job: JobRequest): JobStatus | Promise<JobStatus> {
  return runSync.call(executor, job);
}

/** The `info` of a job run on the synchronous path (it has none). */
const NO_INFO: Readonly<Record<string, unknown>> = Object.freeze({});
const ABORTED: JobStatus = Object.freeze({ state: 'cancelled', reason: 'aborted' });
/** Fast steps run back to back before the pump checks whether to yield to the event loop. */
const FAST_BATCH = 1024;
/** Items of an array taken per expansion (one identity pass and one batched state read each). */
const CHUNK = 1024;
/** Longest stretch of synchronous steps before the event loop gets a turn (signals, timers, I/O). */
const SLICE_MS = 20;

/** Dependencies' output paths and recorded results (every dependency's result must be known). */
function depInputsOf(deps: readonly Node[]): DepInputs {
  // Null-prototype objects start in dictionary mode: keys are step hashes, unique per step, and
  // literal objects would grow one hidden class per key.
  const depPaths = Object.create(null) as Record<string, string>;
  const depResults = Object.create(null) as Record<string, unknown>;
  for (let i = 0; i < deps.length; i++) {
    const d = deps[i] as Node;
    depPaths[keyOf(d)] = d.path;
    if (d.result !== undefined) depResults[keyOf(d)] = d.result;
  }
  return { depPaths, depResults };
}

/** The task payload of one attempt. */
function taskOf(node: Node, deps: readonly Node[], inputs: DepInputs, attempt: number): TaskPayload {
  const spec = node.spec;
  const depKeys = new Array<string>(deps.length);
  for (let i = 0; i < deps.length; i++) depKeys[i] = keyOf(deps[i] as Node);
  return {
    v: 1,
    name: spec.name,
    nameWithHash: keyOf(node),
    kind: spec.kind,
    ref: spec.ref ?? { module: 'inline:', export: spec.name },
    inputs: spec.inputs,
    depKeys,
    outputPath: node.path,
    depPaths: inputs.depPaths,
    depResults: inputs.depResults,
    attempt,
    resources: spec.resources ?? {},
  };
}

const NO_RESOURCES: Resources = Object.freeze({});

/** What a {@link FastJob} makes on first use. */
interface FastJobLazy {
  deps?: readonly Node[];
  inputs?: DepInputs;
  task?: TaskPayload;
  files?: AttemptFiles;
  ac?: AbortController;
  reason?: unknown;
}

/**
 * The first attempt of a step on the synchronous path. An in-process executor reads few of its
 * fields, so the rest (task payload, dependency maps, log paths) is built on first access, and
 * the AbortController behind `signal` is created only when someone asks for the signal: most
 * steps never do. `abort` records the reason either way.
 */
class FastJob implements JobRequest {
  readonly #node: Node;
  readonly #run: Run;
  /** What the job makes only when asked (most synchronous steps ask for none of it). */
  #lazy: FastJobLazy | undefined = undefined;
  /** Aborted (with `reason`), whether or not the controller exists. */
  aborted = false;

  constructor(node: Node, run: Run) {
    this.#node = node;
    this.#run = run;
  }

  get spec(): StepSpec {
    return this.#node.spec;
  }

  get outputPath(): string {
    return this.#node.path;
  }

  get resources(): Resources {
    return this.#node.spec.resources ?? NO_RESOURCES;
  }

  get prefix(): string {
    return this.#node.stamp.prefix;
  }

  get #made(): FastJobLazy {
    return (this.#lazy ??= {});
  }

  get #depNodes(): readonly Node[] {
    return (this.#made.deps ??= this.#run.depNodesOf(this.#node));
  }

  get jobKey(): string {
    return `${keyOf(this.#node)}.1`;
  }

  get inputs(): DepInputs {
    return (this.#made.inputs ??= depInputsOf(this.#depNodes));
  }

  get task(): TaskPayload {
    return (this.#made.task ??= taskOf(this.#node, this.#depNodes, this.inputs, 1));
  }

  get logPaths(): { readonly stdout: string; readonly stderr: string } {
    const f = (this.#made.files ??= this.#run.store.attemptFiles(this.outputPath, 1));
    return { stdout: f.stdout, stderr: f.stderr };
  }

  get attemptDir(): string {
    return (this.#made.files ??= this.#run.store.attemptFiles(this.outputPath, 1)).dir;
  }

  get signal(): AbortSignal {
    return this.controller().signal;
  }

  /** The AbortController behind `signal`, created now if needed (already aborted when `abort` came first). */
  controller(): AbortController {
    const made = this.#made;
    let ac = made.ac;
    if (ac === undefined) {
      ac = made.ac = new AbortController();
      if (this.aborted) ac.abort(made.reason);
    }
    return ac;
  }

  abort(reason?: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    const made = this.#made;
    made.reason = reason;
    made.ac?.abort(reason);
  }
}

/**
 * What one step's artifact record is made of, kept until the record is needed. A store that
 * writes records (LocalStore) gets the record object at once ({@link recordOf}); one that keeps
 * them in memory (MemoryStore, `commitDeferredSync`) keeps this and builds the record when it is
 * first read: most records of a run in memory are never read, and building ~20 fields and four
 * arrays per step was a large share of the scheduler's own time and garbage. (A step that
 * succeeded on the synchronous path needs none of this: its node is its deferred record.)
 *
 * Everything it reads is fixed once the step is committed: the node's spec, path, key, executor
 * and resolved dependencies, and the values passed here.
 */
class StepRecord implements DeferredRecord {
  constructor(
    readonly runId: string,
    readonly node: Node,
    readonly status: StatusToken,
    readonly state: 'succeeded' | 'failed' | 'cancelled',
    /** Every attempt, or null for one attempt run on the synchronous path (described by the fields below). */
    readonly attempts: readonly AttemptRecord[] | null,
    /** The job handle of the last attempt; with `attempts` null, the name of the executor that ran it. */
    readonly handle: JobHandle | string | undefined,
    readonly error: unknown,
    /** The recorded (JSON) value. */
    readonly value: unknown,
    readonly start: number,
    readonly end: number,
  ) {}

  /** False when only the status is written (a lazy step writes its own record when it succeeds). */
  get written(): boolean {
    return !(this.node.spec.writesRecord && this.state === 'succeeded');
  }

  build(): ArtifactRecord {
    return buildRecord(this.runId, this.node, this.status, this.attempts, this.handle, this.error, this.value, this.start, this.end);
  }
}

/** The artifact record of `node` (see {@link StepRecord} for the arguments). */
function buildRecord(
  runId: string,
  node: Node,
  status: StatusToken,
  attemptList: readonly AttemptRecord[] | null,
  lastHandle: JobHandle | string | undefined,
  error: unknown,
  value: unknown,
  start: number,
  end: number,
): ArtifactRecord {
  const spec = node.spec;
  const deps = spec.deps;
  // From the specs (a deferred record may be built after its run): a dependency's path and
  // identity are its own, whichever spec of the same path the run kept as the step.
  const prefix = node.stamp.prefix;
  const depPaths = new Array<string>(deps.length);
  const depIdents = new Array<string>(deps.length);
  for (let i = 0; i < deps.length; i++) {
    const d = deps[i] as StepSpec;
    depPaths[i] = d.outputPath(prefix);
    depIdents[i] = d.version !== undefined ? d.ident : d.nameWithHash;
  }
  let config: unknown = spec.hashAttrs;
  if (spec.kind === 'apply') {
    const byKey: Record<string, string> = {};
    for (let i = 0; i < deps.length; i++) byKey[(deps[i] as StepSpec).nameWithHash] = depPaths[i] as string;
    const resolved = jsonSafe(resolveInputs(spec, node.path, byKey));
    config = resolved === NOT_JSON ? null : resolved;
  }
  let attempts = attemptList;
  let handle = lastHandle;
  if (attempts === null) {
    // The one attempt of the synchronous path: job `<key>.1`, as its FastJob was keyed.
    const jobId = `${keyOf(node)}.1`;
    handle = { jobId, executor: handle as string, info: NO_INFO };
    attempts = [{ attempt: 1, start, end, state: 'succeeded', executor: node.executor, jobId, host: thisHost() }];
  }
  // Built field by field (no spreads), in the order of the record format.
  const record: Record<string, unknown> = { cairn: 1, name: spec.name, nameWithHash: keyOf(node) };
  if (spec.version !== undefined) record.version = spec.version;
  if (spec.fingerprint !== undefined) record.fingerprint = spec.fingerprint;
  if (spec.fingerprintPayload !== undefined) record.fingerprintPayload = spec.fingerprintPayload;
  record.outputPath = node.path;
  record.config = config;
  record.deps = depIdents;
  record.depPaths = depPaths;
  record.status = status;
  if (value !== undefined) record.result = value;
  if (error !== undefined) record.error = errorData(error);
  if (spec.provenance !== undefined) record.provenance = spec.provenance;
  record.attempts = attempts;
  record.timings = { start, end, durationMs: end - start };
  record.executor = node.executor;
  if (handle !== undefined) record.job = handle;
  record.runId = runId;
  return record as unknown as ArtifactRecord;
}

/** The record to commit now, or undefined when only the status is written. */
function recordOf(r: StepRecord): ArtifactRecord | undefined {
  return r.written ? r.build() : undefined;
}

/** What {@link jsonSafe} returns for a value that has no JSON form. */
const NOT_JSON: unique symbol = Symbol('not JSON');

/** The JSON form of `value` (undefined stays undefined), or {@link NOT_JSON}. No object is made for the common values. */
function jsonSafe(value: unknown): unknown {
  if (value === undefined || value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  // A finite number is its own JSON form, except -0 (which JSON turns into 0).
  if (typeof value === 'number' && Number.isFinite(value) && !Object.is(value, -0)) return value;
  try {
    const text = JSON.stringify(value);
    return text === undefined ? NOT_JSON : (JSON.parse(text) as unknown);
  } catch {
    return NOT_JSON;
  }
}

/** The `extra` of a settle or event that has no error or message (shared: most have none). */
const NO_EXTRA: { readonly error?: unknown; readonly message?: string } = Object.freeze({});

/** `counts` with the states no step ended in left out. */
function countsOf(counts: Readonly<Record<FinalStepState, number>>): Partial<Record<StepState, number>> {
  const out: Partial<Record<StepState, number>> = {};
  for (const k in counts) if (counts[k as FinalStepState] > 0) out[k as FinalStepState] = counts[k as FinalStepState];
  return out;
}

/** Clears the tag `run` left on a node's spec. */
function clearTag(node: Node, run: Run): void {
  node.spec._clearTag(run);
}

/** @internal */
export class Run {
  readonly #c: RunConfig;
  readonly #stamp: RunStamp;
  /** Every step of the run by output path (two specs with one path are one step). */
  readonly #nodes = new PathIndex<Node>();
  /**
   * Specs find their node through a tag this run leaves on them (`spec._tag(this)`), not a
   * spec→node map; a spec whose tag another run has taken since is found by its output path.
   * Specs that share a node with another spec are listed here, so their tags are cleared too.
   */
  readonly #aliases: StepSpec[] = [];
  /**
   * Dependents as linked lists of edges, not an array per step: edge `e` leads to the step
   * `#edgeTo[e]`, and `#edgeNext[e]` is the next edge of the same dependency (-1: the last).
   * A settled step's edges go to a free list (`#freeEdge`, linked through `#edgeNext`), so the
   * tables hold at most the edges of unsettled steps at the busiest moment.
   */
  readonly #edgeTo: (Node | undefined)[] = [];
  #edgeNext = new Int32Array(1024);
  #freeEdge = -1;
  /**
   * Steps ready to start: `#ready[#readyHead .. #readyTail)`. The array's length is only its
   * capacity: emptied by resetting the indices, never shortened, so a run that fills and drains
   * it chunk after chunk does not grow a new one each time.
   */
  readonly #ready: Node[] = [];
  #readyHead = 0;
  #readyTail = 0;
  readonly #blocked: Node[] = [];
  readonly #poolFree = new Map<string, number>();
  readonly #poolCap = new Map<string, number>();
  #running = 0;
  #unsettled = 0;
  #pulling = true;
  #stopPulling = false;
  #cancelled = false;
  #cancelReason: unknown;
  #fatal: unknown;
  readonly #failures: StepFailure[] = [];
  #depFailedCount = 0;
  /** Settled steps by final state: every key from the start (see {@link countsOf}). */
  readonly #counts: Record<FinalStepState, number> = { succeeded: 0, cached: 0, skipped: 0, failed: 0, 'dep-failed': 0, cancelled: 0 };
  readonly #held = new Set<Node>();
  readonly #waitingLease = new Set<Node>();
  readonly #settleQueue: unknown[] = [];
  #settling = false;
  #writes: (() => Promise<void>)[] = [];
  #writesHead = 0;
  #writing = 0;
  #heartbeat: NodeJS.Timeout | undefined;
  #leaseTimer: NodeJS.Timeout | undefined;
  #leaseTick = false;
  #beatTick = false;
  readonly #usedExecutors = new Set<string>();
  readonly #starting = new Map<string, Promise<void>>();
  readonly #started = new Set<string>();
  readonly #refChecks = new Map<string, Promise<unknown>>();
  #idle: (() => void) | undefined;
  #capacity: (() => void) | undefined;
  readonly #emit: ((event: RunnerEvent) => void) | undefined;
  /** The store's synchronous operations, when it has them. */
  readonly #sync: SyncStoreOps | undefined;
  /**
   * The lease holder of every step on the synchronous path: a lease taken and released on one
   * stack needs no holder of its own, only the current time, set at each acquisition. A step
   * handed over to the general path keeps it (its token is this run's); refreshing it rewrites
   * the lease with the time of the refresh, as for any holder.
   */
  #syncHolder: LeaseHolder | undefined = undefined;
  /** The synchronous path holds the lease of the step it runs (with {@link #syncHolder}). */
  #syncLeased = false;
  /** The job of the step running on the synchronous path (`cancel` aborts it). */
  #syncJob: FastJob | null = null;
  #pumping = false;
  #pumpAgain = false;
  /** When the pump's slice began (performance.now()). A double from the start: see {@link anchor}. */
  #sliceStart = 0.5;
  #fastCount = 0;
  #deferred = false;

  constructor(config: RunConfig) {
    this.#c = config;
    this.#stamp = { runId: config.runId, prefix: config.prefix, epoch: Date.now() };
    this.#emit = config.emit;
    this.#sync = config.store.sync;
    for (const [k, v] of Object.entries(config.pools)) {
      this.#poolCap.set(k, v);
      this.#poolFree.set(k, v);
    }
  }

  /** Runs to the end: resolves with the summary, rejects with StepRunError / CAIRN_CANCELLED / a setup error. */
  async execute(steps: Iterable<StepInput> | AsyncIterable<StepInput>): Promise<RunSummary> {
    const c = this.#c;
    const onAbort = () => this.cancel(c.signal?.reason ?? new CairnError('CAIRN_CANCELLED', 'The run was cancelled.'));
    const onSigint = () => {
      if (this.#cancelled) {
        // A second Ctrl-C: stop waiting and let the default handler end the process.
        process.removeListener('SIGINT', onSigint);
        process.kill(process.pid, 'SIGINT');
        return;
      }
      c.logger.warn('Interrupted: cancelling running steps (Ctrl-C again to exit at once).');
      this.cancel(new CairnError('CAIRN_CANCELLED', 'The run was interrupted (SIGINT).'));
    };
    if (c.handleSigint) process.on('SIGINT', onSigint);
    c.signal?.addEventListener('abort', onAbort, { once: true });
    this.#emit?.({ type: 'run-started', runId: c.runId, prefix: c.prefix, time: Date.now() });
    const idle = new Promise<void>((resolve) => (this.#idle = resolve));
    try {
      if (c.signal?.aborted) onAbort();
      await this.#pull(steps);
      this.#pulling = false;
      this.#checkIdle();
      await idle;
    } finally {
      if (c.handleSigint) process.removeListener('SIGINT', onSigint);
      c.signal?.removeEventListener('abort', onAbort);
      clearInterval(this.#heartbeat);
      clearInterval(this.#leaseTimer);
      // A finished run leaves no tags behind: specs outlive runs, and would keep their nodes alive.
      this.#nodes.forEach(clearTag, this);
      for (const spec of this.#aliases) spec._clearTag(this);
      await Promise.all([...this.#usedExecutors].map((n) => c.registry.release(n).catch((err: unknown) => c.logger.warn(`Stopping executor "${n}" failed: ${String(err)}`))));
    }
    this.#emit?.({ type: 'run-finished', runId: c.runId, prefix: c.prefix, counts: countsOf(this.#counts), time: Date.now() });
    if (this.#fatal !== undefined) throw this.#fatal;
    if (this.#cancelled) {
      throw new CairnError('CAIRN_CANCELLED', `The run was cancelled (${this.#counts.cancelled} step(s) stopped or not started). Rerun to resume: finished steps are not run again.`, {
        cause: this.#cancelReason,
      });
    }
    if (this.#failures.length > 0) throw new StepRunError(this.#failures, this.#depFailedCount);
    return {
      runId: c.runId,
      prefix: c.prefix,
      counts: countsOf(this.#counts),
      outcome: (step) => outcomeOf(typeof step === 'string' ? this.#nodes.get(step) : this.#nodeOf(step)),
    };
  }

  /** @internal The nodes of a step's dependencies, in order (resolved when asked: most steps never ask). */
  depNodesOf(node: Node): Node[] {
    const deps = node.spec.deps;
    const out = new Array<Node>(deps.length);
    for (let i = 0; i < deps.length; i++) out[i] = this.#nodeOf(deps[i] as StepSpec) as Node;
    return out;
  }

  /** @internal The run's store. */
  get store(): Store {
    return this.#c.store;
  }

  /** The node of `spec` in this run: its tag, else the node at its output path. */
  #nodeOf(spec: StepSpec): Node | undefined {
    const tagged = spec._tag(this) as Node | undefined;
    return tagged !== undefined ? tagged : this.#nodes.get(spec.outputPath(this.#c.prefix));
  }

  /** Cancels the run: running steps are aborted and record CANCELLED; the rest never start. */
  cancel(reason: unknown): void {
    if (this.#cancelled) return;
    this.#cancelled = true;
    this.#cancelReason = reason;
    this.#stopPulling = true;
    this.#capacity?.();
    // The step running on the synchronous path right now (its job is aborted; it hands over).
    this.#syncJob?.abort(reason);
    for (const node of this.#nodes.values()) {
      if ((node.flags & SETTLED) !== 0) continue;
      const controller = node.ext === null ? null : node.ext.controller;
      if (controller) controller.abort(reason);
      else if ((node.flags & ACTIVE) === 0) this.#settle(node, 'cancelled', { error: reason });
    }
    this.#checkIdle();
  }

  #fail(err: unknown): void {
    if (this.#fatal === undefined) this.#fatal = err;
    this.cancel(err);
  }

  // ---- pulling and expansion ---------------------------------------------------------------

  async #pull(steps: Iterable<StepInput> | AsyncIterable<StepInput>): Promise<void> {
    if (Array.isArray(steps)) {
      // An array is already materialised: take it in chunks (one expansion, one batched read per chunk).
      const list = steps as readonly StepInput[];
      // At least one step per item: size the table once instead of doubling it ~log2(n) times.
      this.#nodes.reserve(this.#nodes.size + list.length);
      this.#c.store.reserve?.(list.length);
      try {
        for (let i = 0; i < list.length && !this.#stopPulling; i += CHUNK) {
          if (this.#readyTail - this.#readyHead >= this.#c.maxConcurrent) {
            await new Promise<void>((resolve) => (this.#capacity = resolve));
            this.#capacity = undefined;
          }
          await this.#add(list.slice(i, i + CHUNK));
          await yieldToLoop();
        }
      } catch (err) {
        this.#fail(err);
      }
      return;
    }
    const asyncIt = (steps as AsyncIterable<StepInput>)[Symbol.asyncIterator];
    const it: Iterator<StepInput> | AsyncIterator<StepInput> =
      typeof asyncIt === 'function' ? asyncIt.call(steps) : (steps as Iterable<StepInput>)[Symbol.iterator]();
    let pulled = 0;
    let finished = false;
    try {
      while (!this.#stopPulling) {
        // Backpressure: do not pull more while enough runnable work is already queued.
        if (this.#readyTail - this.#readyHead >= this.#c.maxConcurrent) {
          await new Promise<void>((resolve) => (this.#capacity = resolve));
          this.#capacity = undefined;
          continue;
        }
        let r = it.next();
        if (r instanceof Promise) r = await r;
        if ((r as IteratorResult<StepInput>).done) {
          finished = true;
          break;
        }
        await this.#add([(r as IteratorResult<StepInput>).value]);
        // Let running steps make progress between pulls of a synchronous iterable.
        if (++pulled % 64 === 0) await yieldToLoop();
      }
    } catch (err) {
      this.#fail(err);
    } finally {
      if (!finished) await Promise.resolve(it.return?.()).catch(() => undefined);
    }
  }

  async #add(items: readonly StepInput[]): Promise<void> {
    // One lowering and one identity pass per batch: provenance is captured once and fresh
    // graphs are hashed in a single backend call, not item by item.
    // (computeIdentities skips specs already hashed; most chunks are all specs and all new, so
    // no array is filtered unless a handle or a known spec is among them.)
    let handles: ArtifactStep<unknown>[] | undefined;
    let specs: StepSpec[] | undefined;
    let known = false;
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      if (item instanceof StepSpec) {
        if (specs !== undefined) specs.push(item);
        if (item._tag(this) !== undefined) known = true;
      } else if (isArtifactStep(item)) {
        if (handles === undefined) {
          handles = [];
          specs = items.slice(0, i) as StepSpec[];
        }
        handles.push(item);
      } else {
        throw new CairnError('CAIRN_BAD_DEPENDENCY', `run(): got ${item === null ? 'null' : typeof item} where a step was expected; pass StepSpecs or handles returned by apply().`);
      }
    }
    const plain = specs ?? (items as readonly StepSpec[]);
    if (plain.length > 0) computeIdentities(plain);
    let roots: readonly StepSpec[] = plain;
    if (handles !== undefined || known) {
      const lowered = handles !== undefined ? lower(handles) : [];
      const list: StepSpec[] = [];
      let h = 0;
      for (const item of items) {
        const root = item instanceof StepSpec ? item : (lowered[h++] as StepSpec);
        if (root._tag(this) === undefined) list.push(root);
      }
      roots = list;
    }
    if (roots.length === 0) return;
    const fresh: Node[] = [];
    let frontier: readonly StepSpec[] = roots;
    const prefix = this.#c.prefix;
    const nodes = this.#nodes;
    const sync = this.#sync;
    while (frontier.length > 0) {
      const start = fresh.length;
      // One pass: new nodes, and the paths whose state to read (mutable steps are always rebuilt).
      // Arrays sized up front and trimmed after: grown by push they would be copied ~8 times.
      const paths = new Array<string>(frontier.length);
      const withRecord = new Array<boolean>(frontier.length);
      let nPaths = 0;
      for (let i = 0; i < frontier.length; i++) {
        const spec = frontier[i] as StepSpec;
        if (spec._tag(this) !== undefined) continue;
        const path = spec.outputPath(prefix);
        const existing = nodes.get(path);
        if (existing !== undefined) {
          spec._setTag(this, existing);
          if (existing.spec !== spec) this.#aliases.push(spec);
          continue;
        }
        const node = newNode(spec, path, this.#stamp);
        nodes.add(node);
        spec._setTag(this, node);
        fresh.push(node);
        if (!spec.mutable) {
          paths[nPaths] = path;
          withRecord[nPaths++] = spec.fingerprint !== undefined;
        }
      }
      paths.length = nPaths;
      withRecord.length = nPaths;
      this.#unsettled += fresh.length - start;
      if (nPaths > 0) {
        const states = sync !== undefined ? sync.readStatesSync(paths, withRecord) : await this.#c.store.readStates(paths, withRecord);
        let k = 0;
        for (let i = start; i < fresh.length; i++) {
          const node = fresh[i] as Node;
          if (!node.spec.mutable) this.#classify(node, states[k++] as StoredState);
        }
      }
      const next: StepSpec[] = [];
      for (let i = start; i < fresh.length; i++) {
        const node = fresh[i] as Node;
        if ((node.flags & BUILT) !== 0) continue;
        // Dependencies this run has not seen yet are expanded next.
        const specDeps = node.spec.deps;
        for (let j = 0; j < specDeps.length; j++) {
          const d = specDeps[j] as StepSpec;
          if (d._tag(this) === undefined) next.push(d);
        }
      }
      frontier = next;
    }
    if (this.#cancelled) {
      for (const node of fresh) this.#settle(node, 'cancelled', NO_EXTRA);
      return;
    }
    try {
      const checks = this.#validate(fresh);
      if (checks !== undefined) await checks;
    } catch (err) {
      for (const node of fresh) if ((node.flags & SETTLED) === 0) this.#settle(node, 'cancelled', { error: err });
      throw err;
    }
    // Discovery order, so independent steps start in the order given. Any order is correct:
    // a dependency settling later notifies the dependents registered on it.
    for (let i = 0; i < fresh.length; i++) this.#wire(fresh[i] as Node);
    this.#pump();
  }

  #classify(node: Node, st: StoredState): void {
    node.prior = st;
    const spec = node.spec;
    if (st.problem !== undefined) {
      this.#c.logger.warn(`Step ${spec.name} (${node.path}): ${st.problem}; treating it as not built.`);
      return;
    }
    if (st.status !== 'SUCCESS') return;
    node.flags |= BUILT;
  }

  /** Checks executors and function refs of fresh steps; a promise only when refs must be resolved. */
  #validate(nodes: readonly Node[]): Promise<unknown> | undefined {
    const c = this.#c;
    const refs: Promise<unknown>[] = [];
    for (const node of nodes) {
      if ((node.flags & BUILT) !== 0) continue;
      const spec = node.spec;
      const name = spec.executor ?? (c.remoteExecutor !== undefined && hasResources(spec) ? c.remoteExecutor : c.defaultExecutor);
      if (!c.registry.has(name)) {
        throw new CairnError('CAIRN_EXECUTOR', `Step "${spec.name}" asks for executor "${name}", which is not registered (registered: ${c.registry.names().join(', ')}). Register it with new StepRunner({ executors: [...] }) or fix the name.`, { step: spec.name });
      }
      node.executor = name;
      const ex = c.registry.get(name);
      if (!ex.capabilities.inProcess) {
        if (spec.ref === undefined) {
          throw new CairnError(
            'CAIRN_INLINE_FN_REMOTE',
            `Step "${spec.name}": its function is an inline closure, which cannot run on executor "${name}". Export it and wrap it with defineStep(import.meta.url, '<exportName>', fn), or run it on the "inline" executor.`,
            { step: spec.name },
          );
        }
        const key = formatFnRef(spec.ref);
        let check = this.#refChecks.get(key);
        if (!check) {
          check = resolveFnRef(spec.ref, spec.kind === 'path' ? spec.fn : undefined, spec.name);
          this.#refChecks.set(key, check);
        }
        refs.push(check);
      }
      const demand = this.#demandOf(node, name, ex);
      if (demand !== null) extOf(node).demand = demand;
      if (ex.runSync !== undefined && ex.capabilities.inProcess && !ex.capabilities.resumable && spec.timeoutMs === undefined) node.flags |= FAST;
    }
    return refs.length > 0 ? Promise.all(refs) : undefined;
  }

  /** What `node` takes from the pools while it runs; null when nothing (most steps). */
  #demandOf(node: Node, name: string, ex: Executor): Map<string, number> | null {
    const r = node.spec.resources;
    const max = ex.capabilities.maxConcurrency;
    // Checked before any closure exists: a function that makes one allocates its context on entry.
    if (r === undefined && max === undefined) return null;
    return this.#demandFrom(r, name, max);
  }

  #demandFrom(r: Resources | undefined, name: string, max: number | undefined): Map<string, number> | null {
    let demand: Map<string, number> | null = null;
    const add = (k: string, v: number) => {
      if (v > 0 && this.#poolCap.has(k)) (demand ??= new Map()).set(k, v);
    };
    if (r) {
      add('gpu', gpuCount(r.gpus));
      add('memoryGb', r.memoryGb ?? 0);
      add('cpu', r.cpu ?? 0);
    }
    if (max !== undefined) {
      const key = `executor:${name}`;
      if (!this.#poolCap.has(key)) {
        this.#poolCap.set(key, max);
        this.#poolFree.set(key, max);
      }
      add(key, 1);
    }
    return demand;
  }

  #wire(node: Node): void {
    if ((node.flags & SETTLED) !== 0) return;
    const spec = node.spec;
    if ((node.flags & BUILT) !== 0) {
      const drift = this.#driftOf(node);
      if (drift instanceof Error) {
        this.#failStep(node, drift);
        return;
      }
      if (drift !== undefined) this.#c.logger.warn(drift);
      this.#settle(node, 'cached', drift !== undefined ? { message: drift } : NO_EXTRA);
      return;
    }
    let failedDep: Node | undefined;
    const specDeps = spec.deps;
    for (let i = 0; i < specDeps.length; i++) {
      const d = this.#nodeOf(specDeps[i] as StepSpec) as Node;
      if (d === node) continue;
      if ((d.flags & SETTLED) !== 0) {
        if (!SETTLED_OK.has(d.state)) failedDep ??= d;
      } else {
        const e = this.#newEdge(node);
        if (d.lastEdge < 0) d.firstEdge = e;
        else this.#edgeNext[d.lastEdge] = e;
        d.lastEdge = e;
        node.waiting++;
      }
    }
    if (failedDep !== undefined) {
      this.#depFailed(node, failedDep);
      return;
    }
    if (this.#emit) this.#event(node, 'pending', NO_EXTRA);
    if (node.waiting === 0) this.#enqueue(node);
  }

  /** Drift of a built step: undefined (none), a warning, or an Error (pinned fingerprint). */
  #driftOf(node: Node): string | Error | undefined {
    const spec = node.spec;
    const rec = node.prior?.record;
    if (spec.fingerprint === undefined || !rec || rec.fingerprint === undefined || rec.fingerprint === spec.fingerprint) return undefined;
    const lines = describeDrift(rec.fingerprintPayload ?? '', spec.fingerprintPayload ?? '');
    const detail = lines.length > 0 ? `\n  ${lines.join('\n  ')}` : '';
    if (spec.expectedFingerprint !== undefined) {
      return new CairnError(
        'CAIRN_FINGERPRINT_MISMATCH',
        `Step "${spec.name}@${spec.version}": the output at ${node.path} was built with fingerprint ${rec.fingerprint}, but ${spec.expectedFingerprint} is pinned.${detail}\nBump the version, or delete the output to rebuild it.`,
        { step: spec.name },
      );
    }
    return `${spec.name}@${spec.version}: recipe drift — recorded fingerprint ${rec.fingerprint}, now ${spec.fingerprint}; serving the cached output. Bump the version to rebuild.${detail}`;
  }

  // ---- scheduling ----------------------------------------------------------------------------

  #enqueue(node: Node): void {
    this.#ready[this.#readyTail++] = node;
  }

  #fits(demand: Map<string, number>): boolean {
    for (const [k, v] of demand) if ((this.#poolFree.get(k) as number) < v) return false;
    return true;
  }

  /**
   * Starts what fits. Re-entrant calls (a step finishing synchronously settles and pumps again)
   * only flag another pass: however long a chain of synchronous steps, the stack stays flat.
   */
  #pump(): void {
    if (this.#pumping) {
      this.#pumpAgain = true;
      return;
    }
    if (this.#cancelled) return;
    this.#pumping = true;
    this.#sliceStart = performance.now();
    this.#fastCount = 0;
    try {
      // Synchronous steps run in the client's async context: entered once here, not per step.
      if (this.#sync !== undefined && this.#readyHead < this.#readyTail && clientStorage.getStore() !== this.#c.client) clientStorage.run(this.#c.client, Run.#pumpLoop, this);
      else Run.#pumpLoop(this);
    } finally {
      this.#pumping = false;
    }
  }

  /** The pump's passes (static: a per-run closure would be a call target that dies with its run). */
  static #pumpLoop(run: Run): void {
    do {
      run.#pumpAgain = false;
      run.#pumpOnce();
    } while (run.#pumpAgain && !run.#cancelled);
  }

  /** True (and a later pass scheduled) when synchronous steps have held the event loop long enough. */
  #sliceOver(): boolean {
    if (this.#fastCount < FAST_BATCH) return false;
    this.#fastCount = 0;
    if (performance.now() - this.#sliceStart < SLICE_MS) return false;
    if (!this.#deferred) {
      this.#deferred = true;
      setImmediate(() => {
        this.#deferred = false;
        this.#pump();
      });
    }
    return true;
  }

  #pumpOnce(): void {
    const max = this.#c.maxConcurrent;
    if (this.#blocked.length > 0) {
      for (let i = 0; i < this.#blocked.length && this.#running < max; ) {
        const node = this.#blocked[i] as Node;
        if ((node.flags & SETTLED) !== 0) this.#blocked.splice(i, 1);
        else if (this.#fits(demandOf(node) as Map<string, number>)) {
          this.#blocked.splice(i, 1);
          this.#start(node);
        } else i++;
      }
    }
    while (this.#running < max && this.#readyHead < this.#readyTail) {
      if (this.#cancelled) return;
      if (this.#fastCount >= FAST_BATCH && this.#sliceOver()) {
        this.#pumpAgain = false;
        break;
      }
      const node = this.#ready[this.#readyHead++] as Node;
      if ((node.flags & SETTLED) !== 0) continue;
      const d = demandOf(node);
      if (d !== null) {
        let impossible: string | undefined;
        for (const [k, v] of d) if ((this.#poolCap.get(k) as number) < v) impossible = `${k}: needs ${v}, the pool has ${this.#poolCap.get(k)}`;
        if (impossible !== undefined) {
          this.#failStep(node, new CairnError('CAIRN_CONFIG', `Step "${node.name}" can never be placed (${impossible}). Lower its resources or enlarge the pool.`, { step: node.name }));
          continue;
        }
        if (!this.#fits(d)) {
          this.#blocked.push(node);
          continue;
        }
      }
      this.#start(node);
    }
    if (this.#readyHead === this.#readyTail) {
      this.#readyHead = this.#readyTail = 0;
    } else if (this.#readyHead > 1024 && this.#readyHead * 2 > this.#readyTail) {
      // Move the waiting rest to the front, in place.
      this.#ready.copyWithin(0, this.#readyHead, this.#readyTail);
      this.#readyTail -= this.#readyHead;
      this.#readyHead = 0;
    }
    if (this.#capacity && this.#readyTail - this.#readyHead < max) this.#capacity();
  }

  #start(node: Node): void {
    this.#running++;
    node.flags |= HAS_SLOT | ACTIVE;
    const demand = demandOf(node);
    if (demand !== null) for (const [k, v] of demand) this.#poolFree.set(k, (this.#poolFree.get(k) as number) - v);
    if ((node.flags & FAST) !== 0 && this.#sync !== undefined && (node.flags & TOOK_OVER) === 0 && this.#started.has(node.executor)) {
      this.#fastCount++;
      if (this.#runFast(node, this.#sync)) return;
    }
    this.#launchAsync(node);
  }

  /*
   * The hot methods of the synchronous path make no closures: a function whose closures capture
   * its parameters or `this` allocates their context on every call, even when it returns before
   * making one. Promise callbacks and microtasks are made in the small methods below.
   */

  /** Starts `node` on the general path; a failure of the launch itself fails the step. */
  #launchAsync(node: Node): void {
    this.#launch(node).catch((err: unknown) => this.#launchFailed(node, err));
  }

  /** Hands the first attempt of `node` to the general path. */
  #continueAsync(node: Node, first: FirstAttempt): void {
    this.#runAttempts(node, first).catch((err: unknown) => this.#launchFailed(node, err));
  }

  /** Records a store failure of the synchronous path on the general one. */
  #recordFailureAsync(node: Node, err: unknown): void {
    this.#recordFailure(node, err).catch((e: unknown) => this.#launchFailed(node, e));
  }

  /** Pumps again once the current stack is done. */
  #pumpSoon(): void {
    queueMicrotask(() => this.#pump());
  }

  /** Store failures and bugs end up here: the step fails, the run continues. */
  #launchFailed(node: Node, err: unknown): void {
    node.flags &= ~ACTIVE;
    this.#releaseSlot(node);
    if ((node.flags & SETTLED) === 0) this.#failStep(node, err);
  }

  /** `pump`: false when the caller is the pump itself (it goes on starting steps). */
  #releaseSlot(node: Node, pump = true): void {
    if ((node.flags & HAS_SLOT) === 0) return;
    node.flags &= ~HAS_SLOT;
    this.#running--;
    const demand = demandOf(node);
    if (demand !== null) for (const [k, v] of demand) this.#poolFree.set(k, (this.#poolFree.get(k) as number) + v);
    if (pump && !this.#cancelled) this.#pumpSoon();
  }

  /**
   * The synchronous path of one step (store with sync operations, executor with `runSync`):
   * lease → run → commit → release → settle on the pump's stack, with the same files, records
   * and events as the general path. Anything else — a foreign lease, a step that returns a
   * promise, a failed attempt (retries, CANCELLED) — is handed to the general path, which
   * continues from where this one stopped. False when it did nothing (the caller launches).
   */
  #runFast(node: Node, s: SyncStoreOps): boolean {
    const c = this.#c;
    const spec = node.spec;
    const prior = node.prior?.status;
    if (!c.forceRunFailed && (node.flags & SAW_FOREIGN_LEASE) === 0 && (prior === 'FAILED' || prior === 'DEP_FAILED')) return false;
    const created = s.prepareSync(node.path);
    const now = Date.now();
    const holder = (this.#syncHolder ??= makeHolder(c.runId, now));
    holder.timestamp = now / 1000;
    if (!s.createLeaseSync(node.path, holder)) return false; // contended: the general path waits or takes over
    this.#syncLeased = true;
    try {
      // The re-check under the lease (another runner may have finished meanwhile) is needed
      // unless this call created the directory: then no status existed and no runner held it.
      if (!created && (!spec.mutable || (node.flags & SAW_FOREIGN_LEASE) !== 0)) {
        const st = s.readStatesSync([node.path], spec.fingerprint !== undefined)[0];
        if (st?.status === 'SUCCESS' && st.problem === undefined) {
          this.#syncLeased = false;
          s.removeLeaseSync(node.path);
          node.flags &= ~ACTIVE;
          this.#releaseSlot(node, false);
          this.#settle(node, 'skipped', { message: 'built by another runner' });
          return true;
        }
      }
      try {
        this.#checkDeps(node, s);
      } catch (err) {
        this.#finishSync(node, s, 'FAILED', 'failed', [], undefined, err, undefined, now, Date.now());
        return true;
      }
      const start = now;
      if (this.#emit) this.#event(node, 'running', { attempt: 1 });
      const executor = c.registry.get(node.executor);
      const job = new FastJob(node, this);
      this.#syncJob = job;
      const runSync = executor.runSync as NonNullable<Executor['runSync']>;
      const status = clientStorage.getStore() === c.client ? runSync.call(executor, job) : clientStorage.run(c.client, callRunSync, executor, runSync, job);
      this.#syncJob = null;
      if (status instanceof Promise || status.state !== 'succeeded' || job.aborted) {
        // Still running, failed, or cancelled: the general path takes over with the lease held.
        const ac = job.controller();
        const ext = extOf(node);
        ext.controller = ac;
        ext.holder = holder;
        this.#syncLeased = false;
        this.#held.add(node);
        this.#armHeartbeat();
        const handle: JobHandle = { jobId: job.jobKey, executor: executor.name, info: {} };
        const first: FirstAttempt = { inputs: job.inputs, ac, start, status: ac.signal.aborted ? ABORTED : status, handle };
        this.#continueAsync(node, first);
        return true;
      }
      this.#finishSync(node, s, 'SUCCESS', 'succeeded', null, executor.name, undefined, status.result, start, Date.now());
    } catch (err) {
      // A store failure: record FAILED (or at least give the lease back) on the general path.
      this.#syncJob = null;
      const leased = this.#syncLeased;
      this.#syncLeased = false;
      if ((node.flags & SETTLED) !== 0) return true;
      if (leased) {
        extOf(node).holder = holder;
        this.#held.add(node);
      }
      this.#recordFailureAsync(node, err);
    }
    return true;
  }

  async #launch(node: Node): Promise<void> {
    const c = this.#c;
    const spec = node.spec;
    const prior = node.prior?.status;
    if (!c.forceRunFailed && (node.flags & SAW_FOREIGN_LEASE) === 0 && (prior === 'FAILED' || prior === 'DEP_FAILED')) {
      node.flags &= ~ACTIVE;
      this.#releaseSlot(node);
      this.#failStep(node, new CairnError('CAIRN_PREVIOUS_FAILURE', `Step "${spec.name}" failed in an earlier run (status ${prior} at ${node.path}). Fix it and rerun with forceRunFailed: true (the default) to try again.`, { step: spec.name }));
      return;
    }
    const lease = await this.#acquire(node);
    if (lease === 'held' || lease === 'done' || this.#cancelled) {
      node.flags &= ~ACTIVE;
      this.#releaseSlot(node);
      if (lease === 'acquired') await this.#dropLease(node);
      if (this.#cancelled) this.#settle(node, 'cancelled', NO_EXTRA);
      else if (lease === 'done') this.#settle(node, 'skipped', { message: 'built by another runner' });
      else {
        node.state = 'waiting-lease';
        this.#waitingLease.add(node);
        if (this.#emit) this.#event(node, 'waiting-lease', {});
        this.#armLeaseTimer();
      }
      return;
    }
    await this.#runAttempts(node);
  }

  async #runAttempts(node: Node, first?: FirstAttempt): Promise<void> {
    try {
      await this.#attempts(node, first);
    } catch (err) {
      await this.#recordFailure(node, err);
    }
  }

  /** Records a failure under the lease; if even that fails, at least gives the lease back (and rethrows). */
  async #recordFailure(node: Node, err: unknown): Promise<void> {
    if ((node.flags & SETTLED) !== 0) return;
    try {
      await this.#finish(node, 'FAILED', 'failed', [], undefined, err);
    } catch {
      await this.#dropLease(node).catch(() => undefined);
      throw err;
    }
  }

  // ---- leases --------------------------------------------------------------------------------

  async #acquire(node: Node): Promise<'acquired' | 'held' | 'done'> {
    const { store, staleMs, runId } = this.#c;
    await store.prepare(node.path);
    for (let tries = 0; tries < 4; tries++) {
      const holder = makeHolder(runId);
      if (await store.createLease(node.path, holder)) {
        extOf(node).holder = holder;
        this.#held.add(node);
        this.#armHeartbeat();
        const [st] = await store.readStates([node.path], node.spec.fingerprint !== undefined);
        if (st?.status === 'SUCCESS' && st.problem === undefined && (!node.spec.mutable || (node.flags & SAW_FOREIGN_LEASE) !== 0)) {
          await this.#dropLease(node);
          return 'done';
        }
        return 'acquired';
      }
      const info = await store.readLease(node.path);
      if (info === null) continue;
      if (!isStale(info, staleMs)) {
        node.flags |= SAW_FOREIGN_LEASE;
        return 'held';
      }
      this.#c.logger.warn(`Step ${node.name}: taking over the stale lease of ${info.holder?.worker_id ?? 'an unknown holder'} at ${node.path}.`);
      if (await store.breakLease(node.path, info)) node.flags |= TOOK_OVER;
    }
    node.flags |= SAW_FOREIGN_LEASE;
    return 'held';
  }

  async #dropLease(node: Node): Promise<void> {
    const ext = node.ext;
    if (ext === null || ext.holder === null) return;
    this.#held.delete(node);
    ext.holder = null;
    if (ext.refreshing) await ext.refreshing;
    await this.#c.store.removeLease(node.path);
  }

  #armHeartbeat(): void {
    if (this.#heartbeat) return;
    // Ref'd: while a step holds a lease the run is alive, even if the step itself waits on nothing
    // that keeps Node running. Cleared when the run settles.
    this.#heartbeat = setInterval(() => void this.#beat(), this.#c.heartbeatMs);
  }

  async #beat(): Promise<void> {
    if (this.#beatTick) return;
    this.#beatTick = true;
    try {
      await Promise.all(
        [...this.#held].map((node) => {
          const ext = extOf(node);
          const p = this.#refresh(node).finally(() => {
            if (ext.refreshing === p) ext.refreshing = null;
          });
          ext.refreshing = p;
          return p;
        }),
      );
    } finally {
      this.#beatTick = false;
    }
  }

  /** Refreshes one lease; aborts the step when another runner holds it now. */
  async #refresh(node: Node): Promise<void> {
    const store = this.#c.store;
    const holder = holderOf(node);
    if (!holder) return;
    const info = await store.readLease(node.path).catch(() => null);
    if (holderOf(node) !== holder) return; // released meanwhile
    if (info?.holder?.token !== holder.token) {
      this.#held.delete(node);
      extOf(node).holder = null;
      const err = new CairnError(
        'CAIRN_LEASE_LOST',
        `Step "${node.name}": another runner (${info?.holder?.worker_id ?? 'unknown'}) took over its lease at ${node.path}; this runner stopped the step.`,
        { step: node.name },
      );
      node.ext?.controller?.abort(err);
      return;
    }
    holder.timestamp = Date.now() / 1000;
    await store.writeLease(node.path, holder).catch((e: unknown) => this.#c.logger.warn(`Refreshing the lease of ${node.name} failed: ${String(e)}`));
  }

  #armLeaseTimer(): void {
    if (this.#leaseTimer) return;
    // Ref'd on purpose: while a step waits on another runner, this timer is the run's only pending work.
    this.#leaseTimer = setInterval(() => void this.#recheckLeases(), this.#c.pollMs);
  }

  async #recheckLeases(): Promise<void> {
    if (this.#leaseTick) return;
    this.#leaseTick = true;
    const { store, staleMs } = this.#c;
    try {
      const nodes = [...this.#waitingLease];
      const states = await store.readStates(nodes.map((n) => n.path), nodes.map((n) => n.spec.fingerprint !== undefined));
      await Promise.all(
        nodes.map(async (node, i) => {
          if ((node.flags & SETTLED) !== 0 || !this.#waitingLease.has(node)) return;
          if (states[i]?.status === 'SUCCESS' && states[i]?.problem === undefined) {
            this.#waitingLease.delete(node);
            this.#settle(node, 'skipped', { message: 'built by another runner' });
            return;
          }
          const info = await store.readLease(node.path);
          if (info === null || isStale(info, staleMs)) {
            this.#waitingLease.delete(node);
            node.state = 'pending';
            if (this.#emit) this.#event(node, 'pending', { message: 'the other runner released its lease' });
            this.#enqueue(node);
          }
        }),
      );
    } catch (err) {
      this.#c.logger.warn(`Re-checking leases failed: ${String(err)}`);
    } finally {
      this.#leaseTick = false;
      if (this.#waitingLease.size === 0) {
        clearInterval(this.#leaseTimer);
        this.#leaseTimer = undefined;
      }
      this.#pump();
    }
  }

  // ---- attempts ------------------------------------------------------------------------------

  /**
   * Dependencies' paths and results; a promise only when a cached dependency's record must be
   * read and `sync` (the store's synchronous operations) is not given.
   */
  #depInputs(node: Node, sync?: SyncStoreOps): DepInputs | Promise<DepInputs> {
    const checked = this.#checkDeps(node, sync);
    if (checked === undefined) return depInputsOf(this.depNodesOf(node));
    return checked.then(() => depInputsOf(this.depNodesOf(node)));
  }

  /**
   * Makes every dependency's result known (reading cached ones' records); throws when a cached
   * dependency's output vanished. A promise only when records must be read without `sync`.
   */
  #checkDeps(node: Node, sync?: SyncStoreOps): Promise<void> | undefined {
    const deps = node.spec.deps;
    let unknown: Node[] | undefined;
    for (let i = 0; i < deps.length; i++) {
      const d = this.#nodeOf(deps[i] as StepSpec) as Node;
      if ((d.flags & HAS_RESULT) === 0) (unknown ??= []).push(d);
    }
    if (unknown === undefined) return undefined;
    return this.#readDepStates(node, unknown, sync);
  }

  /** {@link #checkDeps} for dependencies whose results are not known yet (cached ones). */
  #readDepStates(node: Node, unknown: Node[], sync: SyncStoreOps | undefined): Promise<void> | undefined {
    const paths = unknown.map((d) => d.path);
    if (sync !== undefined) {
      this.#applyDepStates(node, unknown, sync.readStatesSync(paths, true));
      return undefined;
    }
    return this.#c.store.readStates(paths, true).then((states) => this.#applyDepStates(node, unknown, states));
  }

  /** Cached dependencies: their turn to be confirmed is now, when this step consumes them. */
  #applyDepStates(node: Node, unknown: Node[], states: StoredState[]): void {
    for (let i = 0; i < unknown.length; i++) {
      const d = unknown[i] as Node;
      const st = states[i] as StoredState;
      if (st.status !== 'SUCCESS') {
        throw new CairnError(
          'CAIRN_PRUNED_OUTPUT_MISSING',
          `Step "${node.name}": the cached output of its dependency "${d.name}" at ${d.path} disappeared after its inputs were pruned (status=${st.status ?? 'none'}); rerun to rebuild it and its inputs.`,
          { step: node.name },
        );
      }
      d.flags |= HAS_RESULT;
      d.result = st.record?.result;
    }
  }

  /** One attempt's job request. */
  #jobRequest(node: Node, inputs: DepInputs, attempt: number, signal: AbortSignal): JobRequest {
    const c = this.#c;
    const spec = node.spec;
    const files = c.store.attemptFiles(node.path, attempt);
    return {
      jobKey: `${keyOf(node)}.${attempt}`,
      spec,
      task: taskOf(node, this.depNodesOf(node), inputs, attempt),
      outputPath: node.path,
      prefix: c.prefix,
      resources: spec.resources ?? {},
      logPaths: { stdout: files.stdout, stderr: files.stderr },
      attemptDir: files.dir,
      signal,
    };
  }

  /** A first attempt started synchronously: its status, or cancelled at once when its signal aborts first. */
  #awaitFirst(first: FirstAttempt): Promise<JobStatus> {
    const status = first.status;
    if (!(status instanceof Promise)) return Promise.resolve(status);
    const signal = first.ac.signal;
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

  /** Runs the step's attempts (from the second one when `first` was started on the synchronous path). */
  async #attempts(node: Node, first?: FirstAttempt): Promise<void> {
    const c = this.#c;
    const spec = node.spec;
    const executor = c.registry.get(node.executor);
    if (!this.#started.has(node.executor)) {
      await this.#ensureStarted(node.executor);
      this.#started.add(node.executor);
    }
    let inputs: DepInputs;
    if (first !== undefined) inputs = first.inputs;
    else {
      try {
        const known = this.#depInputs(node);
        inputs = known instanceof Promise ? await known : known;
      } catch (err) {
        await this.#finish(node, 'FAILED', 'failed', [], undefined, err, undefined);
        return;
      }
    }
    // A job a dead runner left running counts as the attempt it was, with that run's earlier attempts.
    let adopted = (node.flags & TOOK_OVER) !== 0 && first === undefined ? await this.#adopt(node) : null;
    const attempts: AttemptRecord[] = adopted ? [...adopted.record.attempts] : [];
    const firstStart = adopted ? adopted.record.firstStart : first !== undefined ? first.start : Date.now();
    let infra = 0;
    for (let attempt = adopted ? adopted.record.attempt : 1; ; attempt++) {
      if (first !== undefined && attempt === 1) {
        // Started on the synchronous path (no timeout, not adopted): wait for it, then go on as usual.
        const ac = first.ac;
        extOf(node).controller = ac;
        const outcome = await this.#afterAttempt(node, attempts, ac, attempt, first.start, firstStart, await this.#awaitFirst(first), first.handle, false, infra);
        if (outcome === 'done') return;
        if (outcome === 'infra') infra++;
        continue;
      }
      const ac = new AbortController();
      extOf(node).controller = ac;
      if (this.#cancelled) ac.abort(this.#cancelReason);
      const start = adopted ? adopted.record.start : Date.now();
      let timer: NodeJS.Timeout | undefined;
      if (spec.timeoutMs !== undefined) {
        const ms = spec.timeoutMs;
        timer = setTimeout(() => ac.abort(new CairnError('CAIRN_TIMEOUT', `Step "${spec.name}" exceeded its timeout of ${ms} ms (attempt ${attempt}). Raise timeoutMs or make the step faster.`, { step: spec.name, retryable: true })), Math.max(0, ms - (Date.now() - start)));
      }
      if (this.#emit) this.#event(node, 'running', { attempt });
      const job = this.#jobRequest(node, inputs, attempt, ac.signal);
      const key = adopted ? adopted.record.executor : node.executor;
      const accepted =
        adopted !== null
          ? adopted.handle
          : executor.capabilities.resumable
            ? (h: JobHandle) => this.#recordJob(node, { cairn: 1, executor: key, job: h, attempt, start, firstStart, attempts: [...attempts], host: thisHost(), runId: c.runId })
            : undefined;
      const { status, handle } = await this.#runJob(key, adopted ? adopted.executor : executor, job, ac.signal, accepted);
      const wasAdopted = adopted !== null;
      adopted = null;
      clearTimeout(timer);
      const outcome = await this.#afterAttempt(node, attempts, ac, attempt, start, firstStart, status, handle, wasAdopted, infra, key);
      if (outcome === 'done') return;
      if (outcome === 'infra') infra++;
    }
  }

  /**
   * Records how an attempt ended; finishes the step (`done`) or says it is retried (`infra`:
   * an infrastructure failure, not spending the step's retries; `retry`).
   */
  async #afterAttempt(
    node: Node,
    attempts: AttemptRecord[],
    ac: AbortController,
    attempt: number,
    start: number,
    firstStart: number,
    status: JobStatus,
    handle: JobHandle | undefined,
    wasAdopted: boolean,
    infra: number,
    key = node.executor,
  ): Promise<'done' | 'infra' | 'retry'> {
    const spec = node.spec;
    if (node.ext !== null) node.ext.controller = null;
    const aborted = ac.signal.aborted ? (ac.signal.reason as unknown) : undefined;
    const code = isCairnError(aborted) ? aborted.code : undefined;
    const state: AttemptRecord['state'] =
      status.state === 'succeeded' ? 'succeeded' : code === 'CAIRN_TIMEOUT' ? 'timeout' : code === 'CAIRN_LEASE_LOST' ? 'lease-lost' : aborted !== undefined ? 'cancelled' : status.state === 'lost' ? 'lost' : status.state === 'cancelled' ? 'cancelled' : 'failed';
    const error = state === 'succeeded' ? undefined : aborted ?? status.error ?? new CairnError('CAIRN_REMOTE', `Step "${spec.name}": job ${status.state}${status.reason ? ` (${status.reason})` : ''}.`, { step: spec.name });
    attempts.push({ attempt, start, end: Date.now(), state, ...(error !== undefined ? { error: errorData(error) } : {}), executor: key, ...(handle ? { jobId: handle.jobId } : {}), host: thisHost(), ...(wasAdopted ? { adopted: true } : {}) });
    if (state === 'succeeded') {
      await this.#finish(node, 'SUCCESS', 'succeeded', attempts, handle, undefined, status.result, firstStart);
      return 'done';
    }
    if (state === 'lease-lost') {
      // The step's directory belongs to the new holder: write nothing.
      if (node.ext !== null) node.ext.jobFile = null;
      node.flags &= ~ACTIVE;
      this.#releaseSlot(node);
      this.#failStep(node, error);
      return 'done';
    }
    if (state === 'cancelled' && (this.#cancelled || status.state === 'cancelled' || aborted !== undefined)) {
      await this.#finish(node, 'CANCELLED', 'cancelled', attempts, handle, error, undefined, firstStart);
      return 'done';
    }
    const isInfra = status.infrastructure === true || state === 'lost';
    let outcome: 'infra' | 'retry' = 'retry';
    if (isInfra && infra < INFRA_RETRIES) {
      outcome = 'infra';
    } else if (attempt - infra > spec.retries) {
      await this.#finish(node, 'FAILED', 'failed', attempts, handle, error, undefined, firstStart);
      return 'done';
    }
    if (this.#emit) this.#event(node, 'retrying', { attempt, error });
    this.#c.logger.warn(`Step ${spec.name}: attempt ${attempt} failed (${error instanceof Error ? error.message : String(error)}); retrying.`);
    return outcome;
  }

  #ensureStarted(name: string): Promise<void> {
    let p = this.#starting.get(name);
    if (!p) {
      this.#usedExecutors.add(name);
      p = this.#c.registry.use(name);
      this.#starting.set(name, p);
    }
    return p;
  }

  /**
   * A job recorded by the dead runner whose lease this run took over, re-attached through its
   * executor's `adopt`; null when there is none or it is gone (the step is then submitted afresh).
   */
  async #adopt(node: Node): Promise<{ record: JobRecord; executor: Executor; handle: JobHandle } | null> {
    const c = this.#c;
    const record = await c.store.readJob(node.path).catch(() => null);
    if (record === null) return null;
    extOf(node).jobFile = Promise.resolve(); // removed at the commit, whatever happens to the job
    if (!c.registry.has(record.executor)) {
      c.logger.warn(`Step ${node.name}: cannot adopt job ${record.job.jobId}: executor "${record.executor}" is not registered; submitting again.`);
      return null;
    }
    const executor = c.registry.get(record.executor);
    if (!executor.capabilities.resumable || executor.adopt === undefined) return null;
    try {
      if (!this.#started.has(record.executor)) {
        await this.#ensureStarted(record.executor);
        this.#started.add(record.executor);
      }
      const handle = await executor.adopt(record.job);
      if (handle === null) {
        c.logger.info(`Step ${node.name}: job ${record.job.jobId} of the previous runner is gone; submitting again.`);
        return null;
      }
      c.logger.info(`Step ${node.name}: adopted job ${handle.jobId} (attempt ${record.attempt}, executor "${record.executor}") from run ${record.runId}.`);
      return { record, executor, handle };
    } catch (err) {
      c.logger.warn(`Step ${node.name}: adopting job ${record.job.jobId} failed (${String(err)}); submitting again.`);
      return null;
    }
  }

  /** Records an accepted job of a resumable executor, so a runner taking over can adopt it. */
  #recordJob(node: Node, record: JobRecord): void {
    extOf(node).jobFile = this.#c.store.writeJob(node.path, record).catch((err: unknown) => this.#c.logger.warn(`Step ${node.name}: recording job ${record.job.jobId} failed: ${String(err)}`));
  }

  /**
   * Submits one attempt (or waits on an adopted job); resolves on its terminal report, or at once
   * when its signal aborts. `key` is the executor's registry key: reports are routed by it, not
   * by `executor.name`. `accepted` is the adopted handle, or is called with the submitted one.
   */
  #runJob(
    key: string,
    executor: Executor,
    job: JobRequest,
    signal: AbortSignal,
    accepted?: JobHandle | ((handle: JobHandle) => void),
  ): Promise<{ status: JobStatus; handle: JobHandle | undefined }> {
    const registry = this.#c.registry;
    return new Promise((resolve) => {
      let handle: JobHandle | undefined;
      let done = false;
      const finish = (status: JobStatus) => {
        if (done) return;
        done = true;
        signal.removeEventListener('abort', onAbort);
        if (handle) registry.forget(key, handle.jobId);
        resolve({ status, handle });
      };
      const onAbort = () => {
        finish({ state: 'cancelled', reason: 'aborted' });
        if (handle) executor.cancel([handle]).catch((err: unknown) => this.#c.logger.warn(`Cancelling ${job.jobKey} failed: ${String(err)}`));
      };
      if (signal.aborted) {
        finish({ state: 'cancelled', reason: 'aborted' });
        if (typeof accepted === 'object') executor.cancel([accepted]).catch(() => undefined);
        return;
      }
      signal.addEventListener('abort', onAbort, { once: true });
      // Submitted from this run's async context, so values the caller keeps in AsyncLocalStorage reach in-process steps.
      const submitted = typeof accepted === 'object' ? Promise.resolve(accepted) : clientStorage.run(this.#c.client, () => executor.submit(job));
      submitted.then(
        (h) => {
          handle = h;
          if (done) {
            registry.forget(key, h.jobId);
            executor.cancel([h]).catch(() => undefined);
          } else {
            if (typeof accepted === 'function') accepted(h);
            registry.expect(key, h.jobId, finish);
          }
        },
        (error: unknown) => finish({ state: 'failed', error }),
      );
    });
  }

  /** The recorded (JSON) form of a successful step's value, kept on the node: a value looks the same whether it ran now or was cached. */
  #recordedValue(node: Node, state: 'succeeded' | 'failed' | 'cancelled', result: unknown): unknown {
    if (state !== 'succeeded') return undefined;
    let value = jsonSafe(result);
    if (value === NOT_JSON) {
      value = undefined;
      this.#c.logger.warn(`Step ${node.spec.name}: its return value is not JSON-serialisable; it is not recorded.`);
    }
    node.result = value;
    node.flags |= HAS_RESULT;
    return value;
  }

  /** After the commit: releases the slot and settles. */
  #settleFinished(node: Node, state: 'succeeded' | 'failed' | 'cancelled', error: unknown, pump: boolean): void {
    node.flags &= ~ACTIVE;
    this.#releaseSlot(node, pump);
    if (state === 'failed') this.#failStep(node, error);
    else this.#settle(node, state, state === 'cancelled' ? { error } : NO_EXTRA);
  }

  /** Writes the record and status, releases the lease, settles the step. */
  async #finish(
    node: Node,
    status: StatusToken,
    state: 'succeeded' | 'failed' | 'cancelled',
    attempts: AttemptRecord[],
    handle: JobHandle | undefined,
    error: unknown,
    result?: unknown,
    start = Date.now(),
  ): Promise<void> {
    const c = this.#c;
    const value = this.#recordedValue(node, state, result);
    const ext = node.ext;
    if (ext !== null && ext.jobFile !== null) {
      // Before the commit: a job file never outlives its step's status.
      await ext.jobFile;
      ext.jobFile = null;
      await c.store.removeJob(node.path);
    }
    await c.store.commit(node.path, status, recordOf(new StepRecord(c.runId, node, status, state, attempts, handle, error, value, start, Date.now())));
    await this.#dropLease(node);
    this.#settleFinished(node, state, error, true);
  }

  /**
   * {@link #finish} on the synchronous path (no job file, no heartbeat registration, called from
   * the pump). `attempts` null: the step's one attempt ran synchronously on the executor named
   * `executorName` (see {@link StepRecord}).
   */
  #finishSync(
    node: Node,
    s: SyncStoreOps,
    status: StatusToken,
    state: 'succeeded' | 'failed' | 'cancelled',
    attempts: AttemptRecord[] | null,
    executorName: string | undefined,
    error: unknown,
    result: unknown,
    start: number,
    end: number,
  ): void {
    const value = this.#recordedValue(node, state, result);
    if (s.commitDeferredSync !== undefined && state === 'succeeded' && attempts === null && executorName === node.executor && !node.spec.writesRecord) {
      // The common case: the node itself is the deferred record (see Node.build).
      const epoch = this.#stamp.epoch;
      node.t0 = sinceEpoch(start, epoch);
      node.t1 = sinceEpoch(end, epoch);
      s.commitDeferredSync(node.path, status, node);
    } else {
      const record = new StepRecord(this.#c.runId, node, status, state, attempts, executorName, error, value, start, end);
      if (s.commitDeferredSync !== undefined && record.written) s.commitDeferredSync(node.path, status, record);
      else s.commitSync(node.path, status, recordOf(record));
    }
    this.#syncLeased = false;
    s.removeLeaseSync(node.path);
    this.#settleFinished(node, state, error, false);
  }

  // ---- settling ------------------------------------------------------------------------------

  #failStep(node: Node, error: unknown): void {
    if ((node.flags & SETTLED) !== 0) return;
    this.#failures.push({ step: node.name, path: node.path, error });
    this.#c.logger.error(`Step ${node.name} failed: ${error instanceof Error ? error.message : String(error)}`);
    this.#settle(node, 'failed', { error });
  }

  #depFailed(node: Node, dep: Node): void {
    this.#depFailedCount++;
    this.#settle(node, 'dep-failed', { message: `dependency ${dep.name} ${dep.state}`, error: new CairnError('CAIRN_DEP_FAILED', `Step "${node.name}" did not run: its dependency "${dep.name}" ${dep.state}.`, { step: node.name }) });
    if (dep.state !== 'cancelled') this.#markDepFailed(node);
  }

  /** Records DEP_FAILED under the lease, so a concurrent runner's SUCCESS is never overwritten. */
  #markDepFailed(node: Node): void {
    this.#unsettled++; // the write keeps the run open
    this.#writes.push(async () => {
      const { store, runId } = this.#c;
      await store.prepare(node.path);
      const holder = makeHolder(runId);
      if (!(await store.createLease(node.path, holder))) return;
      try {
        const [st] = await store.readStates([node.path], false);
        if (st?.status !== 'SUCCESS') await store.commit(node.path, 'DEP_FAILED');
      } finally {
        await store.removeLease(node.path);
      }
    });
    this.#drainWrites();
  }

  #drainWrites(): void {
    while (this.#writing < 16 && this.#writesHead < this.#writes.length) {
      const write = this.#writes[this.#writesHead++] as () => Promise<void>;
      if (this.#writesHead === this.#writes.length) {
        this.#writes = [];
        this.#writesHead = 0;
      }
      this.#writing++;
      write()
        .catch((err: unknown) => this.#c.logger.warn(`Recording DEP_FAILED failed: ${String(err)}`))
        .finally(() => {
          this.#writing--;
          this.#unsettled--;
          this.#drainWrites();
          this.#checkIdle();
        });
    }
  }

  #settle(node: Node, state: StepState, extra: { error?: unknown; message?: string }): void {
    if ((node.flags & SETTLED) !== 0) return;
    node.flags |= SETTLED;
    node.state = state;
    if (this.#settling) {
      this.#settleQueue.push(node, extra);
      return;
    }
    // Iterative: settles made while propagating wait in the queue, so a failure at the root of
    // a long chain settles every dependent without recursion.
    this.#settling = true;
    const queue = this.#settleQueue;
    try {
      this.#propagate(node, extra);
      for (let i = 0; i < queue.length; i += 2) this.#propagate(queue[i] as Node, queue[i + 1] as { error?: unknown; message?: string });
    } finally {
      if (queue.length > 0) queue.length = 0;
      this.#settling = false;
    }
    this.#pump();
    this.#checkIdle();
  }

  #propagate(node: Node, extra: { error?: unknown; message?: string }): void {
    const state = node.state;
    this.#unsettled--;
    this.#counts[state as FinalStepState]++;
    if (this.#emit) this.#event(node, state, extra);
    let e = node.firstEdge;
    if (e < 0) return;
    node.firstEdge = node.lastEdge = -1;
    const ok = SETTLED_OK.has(state);
    const to = this.#edgeTo;
    const next = this.#edgeNext;
    do {
      const d = to[e] as Node;
      const after = next[e] as number;
      // The edge goes back to the free list before `d` is told (nothing adds edges meanwhile).
      to[e] = undefined;
      next[e] = this.#freeEdge;
      this.#freeEdge = e;
      this.#notify(d, node, ok);
      e = after;
    } while (e >= 0);
  }

  /** A new edge to `node` (the free list first, else a new slot), not linked yet. */
  #newEdge(node: Node): number {
    let e = this.#freeEdge;
    if (e >= 0) {
      this.#freeEdge = this.#edgeNext[e] as number;
    } else {
      e = this.#edgeTo.length;
      if (e === this.#edgeNext.length) {
        const bigger = new Int32Array(2 * e);
        bigger.set(this.#edgeNext);
        this.#edgeNext = bigger;
      }
      this.#edgeTo.push(undefined);
    }
    this.#edgeTo[e] = node;
    this.#edgeNext[e] = -1;
    return e;
  }

  /** Tells `d` that its dependency `dep` settled (`ok`: succeeded, cached or skipped). */
  #notify(d: Node, dep: Node, ok: boolean): void {
    if (ok) {
      if (--d.waiting === 0 && (d.flags & SETTLED) === 0) {
        if (this.#cancelled) this.#settle(d, 'cancelled', NO_EXTRA);
        else this.#enqueue(d);
      }
    } else if ((d.flags & SETTLED) === 0) {
      if (dep.state === 'cancelled' || this.#cancelled) this.#settle(d, 'cancelled', NO_EXTRA);
      else this.#depFailed(d, dep);
    }
  }

  #checkIdle(): void {
    if (this.#unsettled === 0 && !this.#pulling && this.#idle) {
      const idle = this.#idle;
      this.#idle = undefined;
      idle();
    }
  }

  #event(node: Node, state: StepState, extra: { attempt?: number; error?: unknown; message?: string }): void {
    try {
      this.#emit?.({ type: 'step', runId: this.#c.runId, step: node.name, path: node.path, state, ...extra, time: Date.now() });
    } catch (err) {
      this.#c.logger.warn(`A progress listener threw: ${String(err)}`);
    }
  }
}

// One idle instance of each class of the synchronous path (see anchor.ts).
{
  const spec = anchor(new StepSpec({ name: 'cairn-anchor', fn: () => undefined }));
  const store = new MemoryStore();
  const node = anchor(newNode(spec, '/cairn-anchor', { runId: '', prefix: '/', epoch: Date.now() }));
  const run = anchor(
    new Run({
      runId: '',
      store,
      prefix: '/',
      maxConcurrent: 1,
      pools: {},
      registry: new ExecutorRegistry(undefined),
      defaultExecutor: 'inline',
      remoteExecutor: undefined,
      forceRunFailed: true,
      signal: undefined,
      handleSigint: false,
      emit: undefined,
      logger: { info() {}, warn() {}, error() {} },
      heartbeatMs: 30_000,
      staleMs: 90_000,
      pollMs: 1_000,
      client: {} as ExecutorClient,
    }),
  );
  anchor(new FastJob(node, run));
}
