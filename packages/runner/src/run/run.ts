/**
 * One run of the StepRunner: the state its modules share, and how it starts and ends.
 *
 * discover.ts pulls and expands the caller's steps; admission.ts starts ready steps within the
 * slots and pools; lifecycle.ts runs each step (leases.ts, attempts.ts, retry-policy.ts,
 * commit.ts); dependents.ts settles steps and propagates to their dependents. Everything is keyed
 * by output path (two specs with one path are one step). The only timers are one lease heartbeat,
 * one re-check of foreign leases while a step waits on one, and per-step timeouts where declared.
 */
import { CairnError, type LowerOptions, type StepSpec, type VersionRule } from '@cairn/core';
import { LoweringSession, specInternals as S } from '@cairn/core/internal';
import { clientStorage, type ExecutorClient } from '../context.js';
import { StepRunError, type StepFailure } from '../errors.js';
import type { RunnerEvent } from '../events.js';
import { isPromise, type Maybe } from '../maybe.js';
import { PathIndex } from '../path-index.js';
import type { ExecutorRegistry } from '../registry.js';
import type { FinalStepState, StepState } from '../states.js';
import { type LeaseHolder, type LeaseTiming, makeHolder } from '../store/leases.js';
import type { StagedAttempt, Store } from '../store/store.js';
import { Admission } from './admission.js';
import { writeDepFailed } from './commit.js';
import { Dependents, depFailedError, NO_EXTRA, type SettleExtra } from './dependents.js';
import { pull, type StepInput } from './discover.js';
import type { Job } from './job.js';
import { EarlierBuilds } from './earlier-builds.js';
import { LeaseKeeper } from './leases.js';
import { LegacyNote } from './legacy-note.js';
import { startLifecycle } from './lifecycle.js';
import { ACTIVE, BUILT, type Node, type RunStamp, SETTLED } from './node.js';
import type { RunSecrets } from '../secrets/resolver.js';
import { writeSecretNames } from '../secrets/attempt-names.js';
import { keepShapes } from './shapes.js';
import type { RunJournal } from '../journal/writer.js';
import type { Selection } from './selection.js';
import { countsOf, type RunSummary, summaryOf } from './summary.js';

export type { Selection };

/** The runner's logger. */
export interface RunnerLogger {
  /** Progress. */
  info(message: string): void;
  /** Something to look at (drift, corrupt files). */
  warn(message: string): void;
  /** A failure. */
  error(message: string): void;
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
  readonly infraRetries: number;
  /** Preempted attempts retried per step (a command step's own wins). */
  readonly preemptionRetries: number;
  /** The wait after a step's first preemption (doubled after each). */
  readonly preemptionBackoffMs: number;
  readonly signal: AbortSignal | undefined;
  readonly handleSigint: boolean;
  readonly emit: ((event: RunnerEvent) => void) | undefined;
  /** The run's journal (it also gets every event through `emit`): discovery hands it the run's plan. */
  readonly journal: RunJournal | undefined;
  readonly logger: RunnerLogger;
  readonly leases: LeaseTiming;
  readonly client: ExecutorClient;
  /** Steps rebuilt whatever is stored, with everything downstream of them (`'all'`: every step). */
  readonly rebuild: Selection | undefined;
  /** Drifted steps served from their recorded outputs (`'all'`: every one). */
  readonly acceptDrift: Selection | undefined;
  /** What a drifted step that is not accepted does: fail the step, or be served with a warning. */
  readonly onDrift: 'error' | 'warn';
  /** The version rule every lazy step of the run passes. */
  readonly versions: VersionRule;
  /** How the run lowers the handles it is given. */
  readonly lowerOptions: LowerOptions;
  /** Discover and classify only: nothing is validated, wired or run (a dry run). */
  readonly dryRun: boolean;
  /** The run's secrets: resolved from the runner's providers, handed to jobs, masked in logs and errors. */
  readonly secrets: RunSecrets;
}


/** Concurrent DEP_FAILED writes. */
const DEP_FAILED_WRITES = 16;

/** @internal */
export class Run {
  readonly config: RunConfig;
  readonly stamp: RunStamp;
  readonly prefix: string;
  readonly store: Store;
  readonly registry: ExecutorRegistry;
  readonly logger: RunnerLogger;
  readonly client: ExecutorClient;
  readonly timing: LeaseTiming;
  /** This run's one lease holder. */
  readonly holder: LeaseHolder;
  /** Every step of the run by output path (the summary keeps it; {@link letGo} replaces it). */
  nodes = new PathIndex<Node>();
  /** Lowers the handles the run is given or pulls, each once however many pulls reach it. */
  lowering: LoweringSession;
  /** Specs that share a node with another spec (their tags are cleared at the end too). */
  readonly aliases: StepSpec[] = [];
  /** Outputs of the versioned layout that content-addressed steps of this run do not reuse. */
  readonly legacy: LegacyNote;
  /** Function-reference checks by formatted ref (one import per distinct ref). */
  readonly refChecks = new Map<string, Promise<unknown>>();
  readonly dependents: Dependents;
  readonly admission: Admission;
  readonly leases: LeaseKeeper;
  /** The attempt running on the run's own stack right now. */
  syncJob: Job | null = null;
  /**
   * A pump pass of this run is on the stack, in the client's async context: a step started there
   * needs no `clientStorage.getStore()` (whose optimized code, and every caller's, V8 drops at
   * each run's end: bench row "10k chain").
   */
  inClient = false;
  /** The lifecycle of the step that ended last (shapes.ts keeps it, released, with the run). */
  lastEnded: { release(): void } | null = null;
  unsettled = 0;
  stopPulling = false;
  cancelled = false;
  cancelReason: unknown;
  #pulling = true;
  #fatal: unknown;
  readonly #failures: StepFailure[] = [];
  readonly #counts: Record<FinalStepState, number> = { succeeded: 0, cached: 0, skipped: 0, failed: 0, 'dep-failed': 0, cancelled: 0 };
  readonly #emit: ((event: RunnerEvent) => void) | undefined;
  readonly #started = new Set<string>();
  readonly #starting = new Map<string, Promise<void>>();
  readonly #writes: Node[] = [];
  #writing = 0;
  #idle: (() => void) | undefined;

  constructor(config: RunConfig) {
    this.config = config;
    this.prefix = config.prefix;
    this.store = config.store;
    this.registry = config.registry;
    this.logger = config.logger;
    this.client = config.client;
    this.timing = config.leases;
    this.#emit = config.emit;
    this.stamp = { runId: config.runId, prefix: config.prefix, epoch: Date.now() };
    this.holder = makeHolder(config.runId);
    this.lowering = new LoweringSession(config.lowerOptions);
    this.dependents = new Dependents(this);
    this.admission = new Admission(this, config.maxConcurrent, config.pools);
    this.leases = new LeaseKeeper(this);
    this.legacy = new LegacyNote(new EarlierBuilds(config.store));
  }

  /** Runs to the end: resolves with the summary, rejects with StepRunError / CAIRN_CANCELLED / a setup error. */
  async execute(steps: Iterable<StepInput> | AsyncIterable<StepInput>): Promise<RunSummary> {
    const c = this.config;
    const onAbort = () => this.cancel(c.signal?.reason ?? new CairnError('CAIRN_CANCELLED', 'The run was cancelled.'));
    const onSigint = () => {
      if (this.cancelled) {
        // A second Ctrl-C: stop waiting and let the default handler end the process.
        process.removeListener('SIGINT', onSigint);
        process.kill(process.pid, 'SIGINT');
        return;
      }
      this.logger.warn('Interrupted: cancelling running steps (Ctrl-C again to exit at once).');
      this.cancel(new CairnError('CAIRN_CANCELLED', 'The run was interrupted (SIGINT).'));
    };
    if (c.handleSigint) process.on('SIGINT', onSigint);
    c.signal?.addEventListener('abort', onAbort, { once: true });
    this.#emit?.({ type: 'run-started', runId: c.runId, prefix: c.prefix, time: Date.now() });
    const idle = new Promise<void>((resolve) => (this.#idle = resolve));
    try {
      if (c.signal?.aborted) onAbort();
      await Promise.resolve(this.store.connect?.(this.prefix))
        .then(() => pull(this, steps))
        .catch((err: unknown) => this.fail(err));
      this.#pulling = false;
      // Said as soon as the look-ups are done (steps run meanwhile), and before the run ends.
      const note = this.legacy.message().then((m) => void (m !== undefined && this.logger.warn(m)));
      this.#checkIdle();
      await idle;
      await note;
    } finally {
      if (c.handleSigint) process.removeListener('SIGINT', onSigint);
      c.signal?.removeEventListener('abort', onAbort);
      this.leases.close();
      this.#release();
      await Promise.all([...this.#starting.keys()].map((n) => this.registry.release(n).catch((err: unknown) => this.logger.warn(`Stopping executor "${n}" failed: ${String(err)}`))));
    }
    const counts = countsOf(this.#counts);
    const nodes = this.nodes;
    // Every step has settled: the run is emptied and kept for its objects' shapes (shapes.ts).
    keepShapes(this);
    this.#emit?.({ type: 'run-finished', runId: c.runId, prefix: c.prefix, counts, time: Date.now() });
    if (this.#fatal !== undefined) throw this.#fatal;
    if (this.cancelled) {
      throw new CairnError('CAIRN_CANCELLED', `The run was cancelled (${this.#counts.cancelled} step(s) stopped or not started). Rerun to resume: finished steps are not run again.`, { cause: this.cancelReason });
    }
    if (this.#failures.length > 0) throw new StepRunError(this.#failures, this.#counts['dep-failed']);
    return summaryOf(c.runId, c.prefix, counts, nodes);
  }

  /**
   * Lets go of what the ended run's steps and caller put in it (steps, specs, results, the
   * lowering's tables, secret values), keeping the objects themselves: see shapes.ts.
   */
  letGo(): void {
    this.nodes = new PathIndex<Node>();
    this.lowering = new LoweringSession(this.config.lowerOptions);
    this.aliases.length = 0;
    this.refChecks.clear();
    this.dependents.clear();
    this.admission.clear();
    this.config.secrets.forget();
    this.syncJob = null;
    this.lastEnded?.release();
  }

  /** A dry run: pulls and classifies `steps` (reading the store, writing nothing), then lets go of the specs. */
  async explore(steps: Iterable<StepInput> | AsyncIterable<StepInput>, visit: (nodes: PathIndex<Node>) => void | Promise<void>): Promise<void> {
    try {
      await this.store.connect?.(this.prefix);
      await pull(this, steps);
      await visit(this.nodes);
    } finally {
      this.#release();
    }
  }

  /** Clears the tags this run left on specs: specs outlive runs, and would keep their nodes alive. */
  #release(): void {
    this.nodes.forEach(clearTag, this);
    for (const spec of this.aliases) S.clearTag(spec, this);
  }

  /** Cancels the run: running steps are aborted and record CANCELLED; the rest never start. */
  cancel(reason: unknown): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.cancelReason = reason;
    this.stopPulling = true;
    this.admission.wake();
    this.syncJob?.abort(reason);
    for (const node of this.nodes.values()) {
      if ((node.flags & SETTLED) !== 0) continue;
      const job = node.ext === null ? null : node.ext.job;
      if (job !== null) job.abort(reason);
      else if ((node.flags & ACTIVE) === 0) this.dependents.settle(node, 'cancelled', { error: reason });
    }
    this.#checkIdle();
  }

  /** A setup failure (discovery, an unwritable store): the run stops and rejects with it. */
  fail(err: unknown): void {
    if (this.#fatal === undefined) this.#fatal = err;
    this.cancel(err);
  }

  /** The node of `spec` in this run: its tag, else the node at its output path. */
  nodeOf(spec: StepSpec): Node | undefined {
    const tagged = S.tag(spec, this) as Node | undefined;
    return tagged !== undefined ? tagged : this.nodes.get(spec.outputPath(this.prefix));
  }

  /** The nodes of a step's dependencies, in order. */
  depNodesOf(node: Node): Node[] {
    const deps = node.spec.deps;
    const out = new Array<Node>(deps.length);
    for (let i = 0; i < deps.length; i++) out[i] = this.nodeOf(deps[i] as StepSpec) as Node;
    return out;
  }

  /** Reports a state change (when anyone listens). */
  event(node: Node, state: StepState, extra: SettleExtra): void {
    if (this.#emit === undefined) return;
    try {
      const runId = this.config.runId;
      // Most events carry no extra: a literal without a spread is several times cheaper to build (every run journals).
      this.#emit(extra === NO_EXTRA ? { type: 'step', runId, step: node.name, path: node.path, state, time: Date.now() } : { type: 'step', runId, step: node.name, path: node.path, state, ...extra, time: Date.now() });
    } catch (err) {
      this.logger.warn(`A progress listener threw: ${String(err)}`);
    }
  }

  // ---- what the modules ask of the run ------------------------------------------------------

  /** admission: begin `node`'s lifecycle. */
  start(node: Node): void {
    node.flags |= ACTIVE;
    startLifecycle(this, node);
  }

  /** admission: runs a pump pass in the client's async context. */
  inContext(pass: () => void): void {
    if (this.inClient) return pass();
    this.inClient = true;
    try {
      if (clientStorage.getStore() === this.client) pass();
      else clientStorage.run(this.client, pass);
    } finally {
      this.inClient = false;
    }
  }

  /** admission: the store must take writes before the first step runs (a run that only reads never asks). */
  beforeFirstStart(node: Node): Maybe<void> {
    const named = (err: unknown) => {
      const message = err instanceof Error ? err.message : String(err);
      return new CairnError('CAIRN_STORE', `Step "${node.name}" is not built and must run, but: ${message} Nothing was run.`, { step: node.name, cause: err });
    };
    // Every secret the steps known so far need resolves before any step starts (CAIRN_SECRET_UNRESOLVED).
    for (const n of this.nodes.values()) if ((n.flags & (SETTLED | BUILT)) === 0) this.config.secrets.valuesFor(n.spec);
    // Then mark the store (store/marker.ts): what tells `cairn clean` this prefix is a Cairn store.
    const mark = () => this.store.markStore?.(this.prefix);
    try {
      const r = this.store.checkWritable(this.prefix);
      const marked = isPromise(r) ? r.then(mark) : mark();
      return isPromise(marked) ? marked.catch((err: unknown) => Promise.reject(named(err))) : marked;
    } catch (err) {
      throw named(err);
    }
  }

  /** job: the values of the secrets `node` declares (undefined: none). */
  secretsOf(node: Node): Readonly<Record<string, string>> | undefined {
    return this.config.secrets.valuesFor(node.spec);
  }

  /** admission: a failure that stops the run. */
  fatal(err: unknown): void {
    this.fail(err);
  }

  /** lifecycle: the step is done (its slot is free); `error` for failed and cancelled ends. */
  ended(node: Node, state: 'succeeded' | 'failed' | 'cancelled' | 'skipped', error: unknown): void {
    node.flags &= ~ACTIVE;
    this.admission.release(node);
    if (state === 'failed') this.failStep(node, error);
    else this.dependents.settle(node, state, state === 'cancelled' ? { error } : state === 'skipped' ? BUILT_ELSEWHERE : NO_EXTRA);
  }

  /** lifecycle: an exception escaped a step's lifecycle (a bug): the step fails, the run goes on. */
  bug(node: Node, err: unknown): void {
    this.leases.drop(node);
    this.ended(node, 'failed', err);
  }

  /** lifecycle: the lease was not ours to take. */
  notAcquired(node: Node, why: 'held' | 'done'): void {
    if (why === 'done') {
      this.ended(node, 'skipped', undefined);
      return;
    }
    node.flags &= ~ACTIVE;
    this.admission.release(node);
    node.state = 'waiting-lease';
    this.event(node, 'waiting-lease', NO_EXTRA);
    this.leases.wait(node);
    this.admission.pump();
  }

  /** attempts: reports `running` (with where its logs go, when anyone listens). */
  running(node: Node, attempt: number, staged: StagedAttempt): void {
    // Before the executor writes a log byte: which secrets a reader of the running log must mask.
    const secretNames = this.config.secrets.namesOf(node.spec);
    if (secretNames.length > 0) writeSecretNames(staged.logs, secretNames);
    if (this.#emit !== undefined) this.event(node, 'running', { attempt, logs: staged.logs });
  }

  /** lifecycle: another attempt follows. */
  retrying(node: Node, attempt: number, error: unknown): void {
    this.event(node, 'retrying', { attempt, error });
    this.logger.warn(`Step ${node.name}: attempt ${attempt} failed (${error instanceof Error ? error.message : String(error)}); retrying.`);
  }

  /** attempts: starts executor `name` for this run (once); undefined when already started. */
  ensureStarted(name: string): Maybe<void> {
    if (this.#started.has(name)) return undefined;
    let p = this.#starting.get(name);
    if (p === undefined) {
      p = this.registry.use(name).then(() => void this.#started.add(name));
      this.#starting.set(name, p);
    }
    return p;
  }

  /** leases: a waiting step was built by the other runner. */
  builtElsewhere(node: Node): void {
    this.dependents.settle(node, 'skipped', BUILT_ELSEWHERE);
  }

  /** leases: a waiting step may be tried again. */
  retry(node: Node): void {
    node.state = 'pending';
    this.event(node, 'pending', { message: 'the other runner released its lease' });
    this.admission.enqueue(node);
    this.admission.pump();
  }

  /** Fails a step (recording it among the run's failures). */
  failStep(node: Node, error: unknown): void {
    if ((node.flags & SETTLED) !== 0) return;
    this.#failures.push({ step: node.name, path: node.path, error });
    this.logger.error(`Step ${node.name} failed: ${error instanceof Error ? error.message : String(error)}`);
    this.dependents.settle(node, 'failed', { error });
  }

  /** What a step that did not run because of `dep` reports. */
  depFailedExtra(node: Node, dep: Node): SettleExtra {
    return { message: `dependency ${dep.name} ${dep.state}`, error: depFailedError(node, dep) };
  }

  // ---- dependents' host ------------------------------------------------------------------------

  settled(node: Node, state: FinalStepState, extra: SettleExtra): void {
    this.unsettled--;
    this.#counts[state]++;
    this.event(node, state, extra);
  }

  ready(node: Node): void {
    this.admission.enqueue(node);
  }

  /** Records DEP_FAILED for `node` (a write that keeps the run open until it is done). */
  depFailed(node: Node): void {
    this.unsettled++;
    this.#writes.push(node);
    this.#drainWrites();
  }

  #drainWrites(): void {
    while (this.#writing < DEP_FAILED_WRITES && this.#writes.length > 0) {
      const node = this.#writes.shift() as Node;
      this.#writing++;
      writeDepFailed(this, node)
        .catch((err: unknown) => this.logger.warn(`Recording DEP_FAILED for ${node.name} failed: ${String(err)}`))
        .finally(() => {
          this.#writing--;
          this.unsettled--;
          this.#drainWrites();
          this.#checkIdle();
        });
    }
  }

  afterSettle(): void {
    this.admission.pump();
    this.#checkIdle();
  }

  #checkIdle(): void {
    if (this.unsettled === 0 && !this.#pulling && this.#idle) {
      const idle = this.#idle;
      this.#idle = undefined;
      idle();
    }
  }
}

const BUILT_ELSEWHERE: SettleExtra = Object.freeze({ message: 'built by another runner' });

/** Clears the tag `run` left on a node's spec. */
function clearTag(node: Node, run: Run): void {
  S.clearTag(node.spec, run);
}
