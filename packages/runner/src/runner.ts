/**
 * `StepRunner`: runs steps lazily and content-addressed, like Marin's StepRunner, with
 * event-driven completion, leases, retries, timeouts, cancellation and pluggable executors.
 */
import { randomBytes } from 'node:crypto';
import { resolve as resolvePath } from 'node:path';
import { type ArtifactStep, CairnError, hasScheme, isArtifactStep, lower, StepSpec } from '@cairn/core';
import type { ExecutorClient, LoadedArtifact } from './context.js';
import { RUNNER_DEFAULTS } from './defaults.js';
import type { RunnerEvent, RunnerListener } from './events.js';
import { makePlan, type Plan } from './plan.js';
import { ExecutorRegistry, type ExecutorsOption } from './registry.js';
import { Run, type RunnerLogger, type RunSummary, type StepInput } from './scheduler.js';
import type { LeaseOptions } from './store/leases.js';
import { LocalStore } from './store/local.js';
import { MemoryStore } from './store/memory.js';
import type { Store } from './store/store.js';

/** Options of {@link StepRunner}. */
export interface StepRunnerOptions {
  /** Steps running at once. @default 8 */
  readonly maxConcurrent?: number;
  /** Store prefix. @default process.env.CAIRN_PREFIX (read when `run()` is called), else `./.cairn` */
  readonly prefix?: string;
  /** Extra executors (instances or factories), by name; they may replace the built-ins `inline`, `threads`, `process`. */
  readonly executors?: ExecutorsOption;
  /** Options handed to executor factories, by executor name (e.g. `{ threads: { maxThreads: 4 } }`). */
  readonly executorOptions?: Readonly<Record<string, unknown>>;
  /** Named capacities (`{ gpu: 2, memoryGb: 64, cpu: 16 }`); a step waits until its `gpus`/`memoryGb`/`cpu` fit. @default {} */
  readonly pools?: Readonly<Record<string, number>>;
  /** Executor of steps that name none. @default 'inline' */
  readonly defaultExecutor?: string;
  /** Executor of steps that declare resources but name no executor. @default defaultExecutor */
  readonly remoteExecutor?: string;
  /** The artifact store. @default a LocalStore */
  readonly store?: Store | 'local' | 'memory';
  /** Logger. @default warnings and errors to stderr */
  readonly logger?: RunnerLogger;
  /** Receives every progress event. */
  readonly onEvent?: RunnerListener;
  /** Lease timing. */
  readonly leases?: LeaseOptions;
}

/** Options of one {@link StepRunner.run}. */
export interface RunOptions {
  /** Report what would run, with no writes. @default false */
  readonly dryRun?: boolean;
  /** Rerun steps that failed before; when false such a step counts as one failure (CAIRN_PREVIOUS_FAILURE). @default true */
  readonly forceRunFailed?: boolean;
  /** Overrides the runner's `maxConcurrent` for this run. */
  readonly maxConcurrent?: number;
  /** Cancels the run: running steps are stopped and record CANCELLED. */
  readonly signal?: AbortSignal;
  /** Cancel on Ctrl-C while the run is active. @default true */
  readonly handleSigint?: boolean;
}

/** Anything `run()` accepts: a list, a generator, an async generator. */
export type Steps = Iterable<StepInput> | AsyncIterable<StepInput>;

const defaultLogger: RunnerLogger = {
  info: () => undefined,
  warn: (m) => console.warn(`[cairn] ${m}`),
  error: (m) => console.error(`[cairn] ${m}`),
};

function positiveInt(name: string, v: number | undefined, dflt: number): number {
  const n = v ?? dflt;
  if (!Number.isInteger(n) || n < 1) throw new CairnError('CAIRN_CONFIG', `${name} must be a positive integer, got ${String(v)}.`);
  return n;
}

/** Runs step graphs. See the package README for semantics and the on-disk layout. */
export class StepRunner {
  readonly #options: StepRunnerOptions;
  readonly #store: Store;
  readonly #registry: ExecutorRegistry;
  readonly #listeners = new Set<RunnerListener>();
  readonly #client: ExecutorClient;

  constructor(options: StepRunnerOptions = {}) {
    this.#options = options;
    positiveInt('maxConcurrent', options.maxConcurrent, RUNNER_DEFAULTS.maxConcurrent);
    for (const [k, v] of Object.entries(options.pools ?? {})) {
      if (typeof v !== 'number' || !(v >= 0)) throw new CairnError('CAIRN_CONFIG', `pools.${k} must be a non-negative number, got ${String(v)}.`);
    }
    const s = options.store;
    this.#store = s === undefined || s === 'local' ? new LocalStore() : s === 'memory' ? new MemoryStore() : s;
    this.#registry = new ExecutorRegistry(options.executors, options.executorOptions);
    for (const name of [options.defaultExecutor, options.remoteExecutor]) {
      if (name !== undefined && !this.#registry.has(name)) this.#registry.get(name); // throws CAIRN_EXECUTOR naming the registered ones
    }
    if (options.onEvent) this.#listeners.add(options.onEvent);
    this.#client = {
      submit: async (step) => (await this.load([step]))[0] as LoadedArtifact<never>,
      run: (...steps) => this.load(steps),
    };
  }

  /** The store this runner uses. */
  get store(): Store {
    return this.#store;
  }

  /** The client steps receive as `ctx.client`. */
  get client(): ExecutorClient {
    return this.#client;
  }

  /** Subscribes to progress events; returns the unsubscribe function. */
  on(listener: RunnerListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** The store prefix a run started now would use. */
  prefix(): string {
    const p = this.#options.prefix ?? process.env.CAIRN_PREFIX ?? './.cairn';
    return hasScheme(p) ? p : resolvePath(p);
  }

  /** Reports what `run` would do, writing nothing. */
  plan(steps: Steps, options: Pick<RunOptions, 'forceRunFailed'> = {}): Promise<Plan> {
    return makePlan(steps, this.#store, this.prefix(), options.forceRunFailed ?? RUNNER_DEFAULTS.forceRunFailed);
  }

  /**
   * Runs `steps` (pulled one at a time) and everything upstream that is not built. Resolves
   * with a summary; rejects with `StepRunError` (CAIRN_STEP_FAILED) listing every failed
   * step, `CAIRN_CANCELLED`, or a setup error (`CAIRN_EXECUTOR`, `CAIRN_INLINE_FN_REMOTE`, …).
   */
  run(steps: Steps, options: RunOptions & { dryRun: true }): Promise<Plan>;
  run(steps: Steps, options?: RunOptions): Promise<RunSummary>;
  async run(steps: Steps, options: RunOptions = {}): Promise<RunSummary | Plan> {
    if (options.dryRun) return this.plan(steps, options);
    const o = this.#options;
    const prefix = this.prefix();
    const runId = `${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
    const logger = o.logger ?? defaultLogger;
    // Fail once, up front, on a store that cannot be written, instead of once per root step.
    await this.#store.checkWritable?.(prefix);
    this.#registry.configure({ prefix, logger, client: this.#client });
    const listeners = this.#listeners;
    const emit =
      listeners.size === 0
        ? undefined
        : (event: RunnerEvent) => {
            for (const l of listeners) {
              try {
                l(event);
              } catch (err) {
                logger.warn(`A progress listener threw: ${String(err)}`);
              }
            }
          };
    const leases = o.leases ?? {};
    const run = new Run({
      runId,
      store: this.#store,
      prefix,
      maxConcurrent: positiveInt('maxConcurrent', options.maxConcurrent ?? o.maxConcurrent, RUNNER_DEFAULTS.maxConcurrent),
      pools: o.pools ?? {},
      registry: this.#registry,
      defaultExecutor: o.defaultExecutor ?? RUNNER_DEFAULTS.defaultExecutor,
      remoteExecutor: o.remoteExecutor,
      forceRunFailed: options.forceRunFailed ?? RUNNER_DEFAULTS.forceRunFailed,
      signal: options.signal,
      handleSigint: options.handleSigint ?? true,
      emit,
      logger,
      heartbeatMs: leases.heartbeatMs ?? 30_000,
      staleMs: leases.staleMs ?? 90_000,
      pollMs: leases.pollMs ?? 1_000,
      client: this.#client,
    });
    return run.execute(steps);
  }

  /** Runs `steps` and loads each: `{ path, value }` in argument order (value from the step's record). */
  async load<T extends readonly StepInput[]>(steps: T, options: RunOptions = {}): Promise<LoadedArtifact[]> {
    const specs = steps.map((s) => {
      if (s instanceof StepSpec) return s;
      if (isArtifactStep(s)) return lower(s as ArtifactStep<unknown>);
      throw new CairnError('CAIRN_BAD_DEPENDENCY', `run(): argument is not a step (got ${s === null ? 'null' : typeof s}); pass handles returned by apply().`);
    });
    const summary = await this.run(specs, options);
    const prefix = summary.prefix;
    const out: LoadedArtifact[] = [];
    const missing: number[] = [];
    specs.forEach((spec, i) => {
      const o = summary.outcome(spec);
      const path = o?.path ?? spec.outputPath(prefix);
      if (o?.hasResult) out.push(o.result === undefined ? { path } : { path, value: o.result });
      else {
        out.push({ path });
        missing.push(i);
      }
    });
    if (missing.length > 0) {
      const states = await this.#store.readStates(missing.map((i) => (out[i] as LoadedArtifact).path), true);
      missing.forEach((i, k) => {
        const result = states[k]?.record?.result;
        if (result !== undefined) out[i] = { path: (out[i] as LoadedArtifact).path, value: result };
      });
    }
    return out;
  }
}
