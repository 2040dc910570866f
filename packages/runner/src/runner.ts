/**
 * `StepRunner`: runs steps lazily and content-addressed, like Marin's StepRunner, with
 * event-driven completion, leases, retries, timeouts, cancellation and pluggable executors.
 */
import { checkSelectorNames } from './run/selector-names.js';
import { randomBytes } from 'node:crypto';
import { type ArtifactStep, CairnError, type Layout, resolvePrefix, type VersionRule } from '@cairn/core';
import type { ExecutorClient, LoadedArtifact } from './context.js';
import { RUNNER_DEFAULTS } from './defaults.js';
import type { RunnerEvent, RunnerListener } from './events.js';
import { checkRunOptions, checkStepRunnerOptions } from './options.js';
import { makePlan, type Plan } from './plan.js';
import { ExecutorRegistry, type ExecutorsOption } from './registry.js';
import { lowerInputs, type StepInput } from './lower-inputs.js';
import { loadArtifacts, type LoadedOf } from './load.js';
import { Run, type RunConfig, type RunnerLogger, type Selection } from './run/run.js';
import type { RunSummary } from './run/summary.js';
import { StoreRegistry } from './store-registry.js';
import { leaseTiming, type LeaseOptions } from './store/leases.js';
import { LocalStore } from './store/local/store.js';
import { MemoryStore } from './store/memory.js';
import { Notifier, trackTargets, type NotifyOptions } from './notify/index.js';
import { maskText } from './secrets/mask.js';
import { RunSecrets } from './secrets/resolver.js';
import type { SecretsOptions } from './secrets/types.js';
import type { Store, StoreFactory } from './store/store.js';
import { RunJournal } from './journal/writer.js';

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
  /** The artifact store; wins over `stores`. @default the registered store for the prefix's scheme (a LocalStore for paths and `file://`) */
  readonly store?: Store | 'local' | 'memory';
  /**
   * Store plugins, chosen by the prefix's scheme: each factory declares the schemes it serves
   * (`s3StoreFactory()` of `@cairn/store-s3` serves `s3://`). A factory for `file` replaces the
   * built-in local store. @default only the local store
   */
  readonly stores?: readonly StoreFactory[];
  /** Options handed to store factories, by factory name (e.g. `{ s3: { endpoint: 'http://127.0.0.1:7480' } }`). */
  readonly storeOptions?: Readonly<Record<string, unknown>>;
  /** Logger. @default warnings and errors to stderr */
  readonly logger?: RunnerLogger;
  /** Receives every progress event. */
  readonly onEvent?: RunnerListener;
  /** Lease timing. */
  readonly leases?: LeaseOptions;
  /**
   * Infrastructure failures an executor reports (`infrastructure: true`, a lost job: a node
   * failure, a preemption, a host gone) retried per step without spending the step's own `retries`.
   * @default 3
   */
  readonly infraRetries?: number;
  /**
   * Preempted attempts (an executor's `preempted: true`: a scheduler's preemption, a spot
   * interruption, a step's preemption exit code) retried per step with backoff, spending neither
   * its `retries` nor `infraRetries`. A command step's own `preemptionRetries` wins. @default 100
   */
  readonly preemptionRetries?: number;
  /** The wait before the attempt after a step's first preemption, doubled after each preemption (at most 5 minutes). @default 1000 */
  readonly preemptionBackoffMs?: number;
  /**
   * Where unpinned `apply` steps without a `layout` of their own live (`lower()`'s option, for the
   * handles this runner lowers): `'content'`, `{name}/{version}-{hash}`, or `'versioned'`,
   * Marin's `{name}/{version}` (drift is then checked). @default 'content'
   */
  readonly layout?: Layout;
  /**
   * A built step at a fixed path (a pin, the `'versioned'` layout) whose record says it was built
   * from another recipe: `'error'` fails it (`CAIRN_DRIFT`, showing the diff and the fixes);
   * `'warn'` serves the recorded output with a warning, as Marin does. @default 'error'
   */
  readonly onDrift?: 'error' | 'warn';
  /**
   * The version rule of lazy steps: `'free'` takes any version; `'calendar'` takes only Marin's
   * calendar versions `YYYY.MM.DD[.N]`, `dev` and those ending in `-dev`, and refuses a run with
   * another (`CAIRN_BAD_VERSION`, naming the step) before anything runs. @default 'free'
   */
  readonly versions?: VersionRule;
  /**
   * Notifications on run end, step failure and slow steps, to a command (JSON on stdin) or an
   * HTTP(S) webhook (JSON POST, or Slack-compatible `{ text }`). A failing or hanging sink is
   * logged and cut off at its timeout; it never fails the run. See {@link NotifyOptions}.
   */
  readonly notify?: NotifyOptions;
  /**
   * Where the values of `secret('NAME')`s come from: providers asked in order (the runner's
   * environment, a 0600 `NAME=value` file, a command). A value is handed to its step only (in
   * memory, or the environment of its process), masked as `***` in its logs, and never recorded.
   * @default { providers: [{ type: 'env' }] }
   */
  readonly secrets?: SecretsOptions;
  /**
   * Each run appends its events to a journal in the store, `{prefix}/.cairn/runs/{runId}.jsonl`
   * (journal/entry.ts), written in batches: what `cairn ui` lists and follows and `cairn report`
   * shows (cache hits and retries included, which step records alone do not hold). Dry runs
   * write none. `false`: no journal. @default true, except on a store that is not durable
   * (`capabilities.durable: false`, as MemoryStore): no other process could read its journal.
   */
  readonly journal?: boolean;
}

/** Steps named in a run option: handles, specs, step names or `nameWithHash`es. */
export type StepSelector = StepInput | string;

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
  /**
   * Rerun these steps (handles, specs, step names or `nameWithHash`es) and everything downstream
   * of them, whatever is stored, under the same identities; `'all'` reruns every step requested
   * and everything upstream of it. Their outputs are replaced at the commit.
   */
  readonly rebuild?: readonly StepSelector[] | 'all';
  /**
   * Serve these drifted steps (or all, `true`) from their recorded outputs, although their recipe
   * changed since they were built (see `onDrift`); each is reported once.
   */
  readonly acceptDrift?: readonly StepSelector[] | boolean;
}

/**
 * Anything `run()` accepts: a list, a generator, an async generator. An array's handles are
 * lowered in one call; an iterable's one by one, each walking its upstream again, so pass handles
 * that share upstream as an array (see the README's "Eager pulling").
 */
export type Steps = Iterable<StepInput> | AsyncIterable<StepInput>;

const defaultLogger: RunnerLogger = {
  info: () => undefined,
  warn: (m) => console.warn(`[cairn] ${m}`),
  error: (m) => console.error(`[cairn] ${m}`),
};

/** The {@link Selection} of a run option (checked by options.ts): specs and handles by output path, strings by name, `name@version` or `nameWithHash`. */
function selectionOf(what: string, option: readonly StepSelector[] | 'all' | boolean | undefined, prefix: string, layout: Layout | undefined): Selection | undefined {
  if (option === undefined || option === false) return undefined;
  if (option === 'all' || option === true) return 'all';
  const names = new Set<string>();
  const steps: StepInput[] = [];
  for (const r of option) {
    if (typeof r === 'string') names.add(r);
    else steps.push(r);
  }
  const paths = new Set<string>();
  for (const spec of lowerInputs(steps, { layout }, what)) paths.add(spec.outputPath(prefix));
  return { paths, names };
}

function positiveInt(name: string, v: number | undefined, dflt: number): number {
  const n = v ?? dflt;
  if (!Number.isInteger(n) || n < 1) throw new CairnError('CAIRN_CONFIG', `${name} must be a positive integer, got ${String(v)}.`);
  return n;
}

/** Runs step graphs. See the package README for semantics and the on-disk layout. */
export class StepRunner {
  readonly #options: StepRunnerOptions;
  /** The store given as `store`, if any; else the registry picks one by the prefix's scheme. */
  readonly #explicitStore: Store | undefined;
  readonly #stores: StoreRegistry;
  readonly #registry: ExecutorRegistry;
  readonly #listeners = new Set<RunnerListener>();
  /** Each run's secrets (what {@link StepRunner.maskSecrets} masks). */
  readonly #secrets: RunSecrets[] = [];
  readonly #client: ExecutorClient;

  constructor(options: StepRunnerOptions = {}) {
    checkStepRunnerOptions(options);
    this.#options = options;
    positiveInt('maxConcurrent', options.maxConcurrent, RUNNER_DEFAULTS.maxConcurrent);
    for (const [k, v] of Object.entries(options.pools ?? {})) {
      if (typeof v !== 'number' || !(v >= 0)) throw new CairnError('CAIRN_CONFIG', `pools.${k} must be a non-negative number, got ${String(v)}.`);
    }
    const s = options.store;
    this.#explicitStore = s === undefined ? undefined : s === 'local' ? new LocalStore() : s === 'memory' ? new MemoryStore() : s;
    this.#stores = new StoreRegistry(options.stores, options.storeOptions);
    // A prefix given here whose scheme no store serves fails now, not at the first run.
    if (options.prefix !== undefined) this.#storeAt(this.prefix());
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

  /** The store this runner uses: the one given as `store`, else the registered store for {@link prefix}'s scheme. */
  get store(): Store {
    return this.#storeAt(this.prefix());
  }

  /** The store for `prefix`: the explicit one, else the registered one for its scheme (CAIRN_STORE when none). */
  #storeAt(prefix: string): Store {
    return this.#explicitStore ?? this.#stores.storeFor(prefix);
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

  /**
   * `text` with every secret value a run of this runner resolved replaced by `***`: for a view
   * that shows a running step's output as it comes (the log files are masked when the attempt
   * ends, as is everything the runner records).
   */
  maskSecrets(text: string): string {
    const values = this.#secrets.flatMap((s) => s.values());
    return values.length === 0 ? text : maskText(text, values);
  }

  #runSecrets(providers: SecretsOptions['providers'] | undefined): RunSecrets {
    const secrets = new RunSecrets(providers);
    this.#secrets.push(secrets);
    // A runner used for many runs keeps only the recent ones (a view masks the run it shows).
    if (this.#secrets.length > 8) this.#secrets.shift();
    return secrets;
  }

  /** The store prefix a run started now would use (`~` expanded, relative paths resolved; an empty prefix is refused). */
  prefix(): string {
    const o = this.#options.prefix;
    if (o !== undefined) return resolvePrefix(o, 'prefix');
    const env = process.env.CAIRN_PREFIX;
    return env !== undefined ? resolvePrefix(env, 'CAIRN_PREFIX') : resolvePrefix('./.cairn');
  }

  /** Reports what `run` would do, writing nothing: the run's own discovery and classification, without running. */
  plan(steps: Steps, options: Pick<RunOptions, 'forceRunFailed' | 'rebuild' | 'acceptDrift'> = {}): Promise<Plan> {
    checkRunOptions(options, 'plan()');
    checkSelectorNames(steps, options, { layout: this.#options.layout }, 'plan()');
    return makePlan(new Run(this.#runConfig(options, true)), steps);
  }

  /**
   * Runs `steps` (pulled one at a time) and everything upstream that is not built. Resolves
   * with a summary; rejects with `StepRunError` (CAIRN_STEP_FAILED) listing every failed
   * step, `CAIRN_CANCELLED`, or a setup error (`CAIRN_EXECUTOR`, `CAIRN_INLINE_FN_REMOTE`, …).
   */
  run(steps: Steps, options: RunOptions & { dryRun: true }): Promise<Plan>;
  run(steps: Steps, options?: RunOptions): Promise<RunSummary>;
  async run(steps: Steps, options: RunOptions = {}): Promise<RunSummary | Plan> {
    checkRunOptions(options);
    if (options.dryRun) return this.plan(steps, options);
    checkSelectorNames(steps, options, { layout: this.#options.layout }, 'run()');
    if (this.#options.notify === undefined) return this.#execute(this.#runConfig(options, false), steps);
    const tracked = trackTargets(steps);
    const notifier = new Notifier(this.#options.notify, this.#options.logger ?? defaultLogger, tracked.names);
    const config = this.#runConfig(options, false, notifier.listener);
    let error: unknown;
    try {
      return await this.#execute(config, tracked.steps);
    } catch (err) {
      error = err;
      throw err;
    } finally {
      await notifier.end(config.runId, config.prefix, error);
    }
  }

  /** Runs `steps` with `config`; the run's journal is complete in the store when this settles. */
  async #execute(config: RunConfig, steps: Steps): Promise<RunSummary> {
    try {
      return await new Run(config).execute(steps);
    } finally {
      await config.journal?.close();
    }
  }

  /** What one run (or dry run) of this runner with `options` works with (`extra`: a listener of this run only). */
  #runConfig(options: RunOptions, dryRun: boolean, extra?: RunnerListener): RunConfig {
    const o = this.#options;
    const prefix = this.prefix();
    const runId = `${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
    const logger = o.logger ?? defaultLogger;
    this.#registry.configure({ prefix, logger, client: this.#client });
    const listeners = extra === undefined ? this.#listeners : new Set([...this.#listeners, extra]);
    const store = this.#storeAt(prefix);
    const journalled = o.journal ?? (RUNNER_DEFAULTS.journal && store.capabilities.durable !== false);
    const journal = dryRun || !journalled || store.browse === undefined ? undefined : this.#journal(store.browse, prefix, runId, logger);
    const emit =
      dryRun || (listeners.size === 0 && journal === undefined)
        ? undefined
        : (event: RunnerEvent) => {
            journal?.write(event);
            for (const l of listeners) {
              try {
                l(event);
              } catch (err) {
                logger.warn(`A progress listener threw: ${String(err)}`);
              }
            }
          };
    return {
      runId,
      store,
      prefix,
      journal,
      maxConcurrent: positiveInt('maxConcurrent', options.maxConcurrent ?? o.maxConcurrent, RUNNER_DEFAULTS.maxConcurrent),
      pools: o.pools ?? {},
      registry: this.#registry,
      defaultExecutor: o.defaultExecutor ?? RUNNER_DEFAULTS.defaultExecutor,
      remoteExecutor: o.remoteExecutor,
      forceRunFailed: options.forceRunFailed ?? RUNNER_DEFAULTS.forceRunFailed,
      infraRetries: o.infraRetries ?? RUNNER_DEFAULTS.infraRetries,
      preemptionRetries: o.preemptionRetries ?? RUNNER_DEFAULTS.preemptionRetries,
      preemptionBackoffMs: o.preemptionBackoffMs ?? RUNNER_DEFAULTS.preemptionBackoffMs,
      signal: options.signal,
      handleSigint: options.handleSigint ?? true,
      emit,
      logger,
      leases: leaseTiming(o.leases),
      client: this.#client,
      rebuild: selectionOf('rebuild', options.rebuild, prefix, o.layout),
      acceptDrift: selectionOf('acceptDrift', options.acceptDrift, prefix, o.layout),
      onDrift: o.onDrift ?? RUNNER_DEFAULTS.onDrift,
      lowerOptions: { layout: o.layout ?? RUNNER_DEFAULTS.layout },
      versions: o.versions ?? RUNNER_DEFAULTS.versions,
      dryRun,
      secrets: this.#runSecrets(o.secrets?.providers),
    };
  }

  /**
   * The journal of run `runId`: one that cannot be written is given up with one warning (the run
   * goes on). A store the runner may not write (read-only mount, another user's directory) is a
   * store served read-only: built outputs are read and nothing else of the run is written either,
   * so its journal is given up with an info line, not a warning.
   */
  #journal(browse: NonNullable<Store['browse']>, prefix: string, runId: string, logger: RunnerLogger): RunJournal {
    const journal = new RunJournal(browse, prefix, runId, (err) => {
      const message = err instanceof Error ? err.message : String(err);
      const code = (err as NodeJS.ErrnoException | undefined)?.code;
      if (code === 'EROFS' || code === 'EACCES' || code === 'EPERM') {
        logger.info(`The store is not writable here (${code}): run ${runId} keeps no journal in it.`);
        return;
      }
      logger.warn(`The run journal ${journal.file} could not be written (${message}); the run goes on, but cairn ui and cairn report will not show it whole. Make the store's .cairn/runs writable, or pass journal: false.`);
    });
    return journal;
  }

  /**
   * Runs `steps` and loads each, in argument order: `{ path, value }`, the value loaded by the
   * step's artifact kind (a step without one: the value it returned, from its record).
   */
  async load<const T extends readonly StepInput[]>(steps: T, options: RunOptions = {}): Promise<{ [K in keyof T]: LoadedOf<T[K]> }> {
    const specs = lowerInputs(steps, { layout: this.#options.layout }, 'load()');
    const summary = await this.run(specs, options);
    return (await loadArtifacts(this.#storeAt(summary.prefix), specs, summary)) as { [K in keyof T]: LoadedOf<T[K]> };
  }

  /** Runs one step (and whatever upstream is missing) and loads it, typed by its artifact kind (Marin's `resolve(handle)`). */
  async resolve<T>(step: ArtifactStep<T>, options: RunOptions = {}): Promise<LoadedArtifact<T>> {
    const [loaded] = await this.load([step] as const, options);
    return loaded as LoadedArtifact<T>;
  }
}
