/**
 * Configuration: `cairn.config.ts` (or `.mts`/`.mjs`/`.js`), overridden by `CAIRN_*`
 * environment variables, overridden by flags. Each effective value remembers its source so
 * `cairn config` can say where it came from.
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { CairnError, describeValue, nearestName, resolvePrefix } from '@cairn/core';
import { builtinExecutors, checkNotifyOptions, checkSecretsOptions, checkStepRunnerOptions, leaseTiming, RUNNER_DEFAULTS, type LeaseOptions, type LeaseTiming, type NotifyOptions, type SecretsOptions, type StoreFactory } from '@cairn/runner';
import { cliError } from './errors.js';
import { importUserModule } from './load-module.js';

/** One executor to register with the runner. */
export interface ExecutorConfig {
  /**
   * The name of a built-in executor (`inline`, `threads`, `process`), an executor factory
   * (`{ name, create(options) }`), or a create function such as `createSshExecutor` from
   * `@cairn/remote-ssh`. @default the entry's key
   */
  readonly use?: string | { readonly name: string; create(options: never): unknown } | ((options: never) => unknown);
  /** Options handed to the factory. */
  readonly options?: Readonly<Record<string, unknown>>;
}

/** One store plugin to register with the runner, chosen by the prefix's scheme. */
export interface StoreConfig {
  /** The plugin's factory (`s3StoreFactory()` of `@cairn/store-s3`), or the function that makes one (`s3StoreFactory`). */
  readonly use: StoreFactory | (() => StoreFactory);
  /** Options handed to the store (the runner's `storeOptions`), e.g. `{ endpoint, region }`. */
  readonly options?: Readonly<Record<string, unknown>>;
}

/** Defaults applied to steps that do not set their own. */
export interface StepDefaults {
  /** Executor for steps that name none. */
  readonly executor?: string;
  /** Retries after a failure. */
  readonly retries?: number;
  /** Per-attempt timeout (ms). */
  readonly timeoutMs?: number;
}

/** The shape of `cairn.config.ts`'s default export. */
export interface CairnConfig {
  /** Store prefix: where outputs, statuses, records and logs live (a path, relative to the config file, or a URL). */
  readonly prefix?: string;
  /** Most steps running at once. */
  readonly maxConcurrent?: number;
  /** Executors by name. */
  readonly executors?: Readonly<Record<string, ExecutorConfig>>;
  /**
   * The executor of steps that declare resources (`resources: { gpu: 1 }`) and name no executor
   * of their own: a built-in or a key of `executors` (the runner's `remoteExecutor`). Steps
   * without resources go to `defaults.executor`.
   */
  readonly remoteExecutor?: string;
  /** Store plugins by name, for prefixes that are not filesystem paths (`{ s3: { use: s3StoreFactory, options: { endpoint } } }`). */
  readonly stores?: Readonly<Record<string, StoreConfig>>;
  /** Named capacities (`{ gpu: 2, memoryGb: 64, cpu: 16 }`): a step waits until its declared resources fit. */
  readonly pools?: Readonly<Record<string, number>>;
  /** Step defaults. */
  readonly defaults?: StepDefaults;
  /** Rerun steps that failed in an earlier run (false: report them as failures without running them). @default true, as the library and Marin */
  readonly forceRunFailed?: boolean;
  /** Where unpinned `apply` steps live: `'content'` (`{name}/{version}-{hash}`) or `'versioned'` (Marin's `{name}/{version}`, drift checked). @default 'content' */
  readonly layout?: 'content' | 'versioned';
  /** A built step at a fixed path built from another recipe: `'error'` (not served) or `'warn'` (served, as Marin does). @default 'error' */
  readonly onDrift?: 'error' | 'warn';
  /** The version rule: `'free'` (any version) or `'calendar'` (Marin's `YYYY.MM.DD[.N]`, `dev`, `…-dev`; others refused). @default 'free' */
  readonly versions?: 'free' | 'calendar';
  /** Lease timing (`{ heartbeatMs, staleMs, pollMs, unreadableGraceMs }`), as the runner's `leases` option; `status`, `clean` and `unlock` judge leases by the same `staleMs`. @default { heartbeatMs: 30000, staleMs: 90000 } */
  readonly leases?: LeaseOptions;
  /** Notifications on run end, step failure and slow steps (the runner's `notify` option): `{ sinks: [{ type: 'webhook', url, format: 'slack' }], slowStepMs }`. */
  readonly notify?: NotifyOptions;
  /** Where `secret('NAME')` values come from (the runner's `secrets` option): `{ providers: [{ type: 'env' }, { type: 'file', path }, { type: 'command', command }] }`. @default the environment */
  readonly secrets?: SecretsOptions;
}

/** Types a config file: `export default defineConfig({ prefix: './store' })`. */
export function defineConfig(config: CairnConfig): CairnConfig {
  return config;
}

/** Where an effective value came from. */
export type ConfigSource =
  /** Built-in default. */
  | 'default'
  /** `cairn.config.ts`. */
  | 'file'
  /** A `CAIRN_*` environment variable. */
  | 'env'
  /** A command-line flag. */
  | 'flag';

/** The configuration a command runs with, after file, environment and flags. */
export interface EffectiveConfig {
  /** The config file read, if any. */
  readonly file: string | undefined;
  /** Absolute store prefix (or URL); undefined when nothing set one. */
  readonly prefix: string | undefined;
  /** Most steps at once (the runner's default when nothing sets it). */
  readonly maxConcurrent: number;
  /** Default executor (the runner's default when nothing sets it). */
  readonly executor: string;
  /** Rerun earlier failures. */
  readonly forceRunFailed: boolean;
  /** Executors to register. */
  readonly executors: Readonly<Record<string, ExecutorConfig>>;
  /** The executor of steps that declare resources (undefined: they go to `executor` like the rest). */
  readonly remoteExecutor: string | undefined;
  /** Store plugins to register. */
  readonly stores: Readonly<Record<string, StoreConfig>>;
  /** Named capacities. */
  readonly pools: Readonly<Record<string, number>>;
  /** Step defaults (retries, timeout). */
  readonly defaults: StepDefaults;
  /** Layout of unpinned `apply` steps. */
  readonly layout: 'content' | 'versioned';
  /** What a drifted step does. */
  readonly onDrift: 'error' | 'warn';
  /** The version rule. */
  readonly versions: 'free' | 'calendar';
  /** Lease timing given in the config file (the runner's `leases` option), as given. */
  readonly leases: LeaseOptions | undefined;
  /** Lease timing with the runner's defaults filled in: a lease not refreshed for `staleMs` is stale. */
  readonly leaseTiming: LeaseTiming;
  /** Notifications (the runner's `notify` option), as given in the config file. */
  readonly notify: NotifyOptions | undefined;
  /** Secret providers (the runner's `secrets` option), as given in the config file. */
  readonly secrets: SecretsOptions | undefined;
  /** Source of each scalar setting. */
  readonly sources: Readonly<Record<'prefix' | 'maxConcurrent' | 'executor' | 'forceRunFailed', ConfigSource>>;
}

/** Flags that override configuration. */
export interface ConfigFlags {
  /** `--config FILE`. */
  readonly config?: string | undefined;
  /** `--prefix P`. */
  readonly prefix?: string | undefined;
  /** `--max-concurrent N` (already parsed). */
  readonly maxConcurrent?: number | undefined;
  /** `--executor NAME`. */
  readonly executor?: string | undefined;
  /** `--force-run-failed` (true) or `--no-force-run-failed` (false). */
  readonly forceRunFailed?: boolean | undefined;
}

/** Config file names looked for, in order, in the current directory and its parents. */
export const CONFIG_FILES = ['cairn.config.ts', 'cairn.config.mts', 'cairn.config.mjs', 'cairn.config.js'] as const;

/** The nearest config file from `cwd` upwards, or undefined. */
export function findConfigFile(cwd: string): string | undefined {
  let dir = resolve(cwd);
  for (;;) {
    for (const name of CONFIG_FILES) {
      const candidate = join(dir, name);
      if (existsSync(candidate)) return candidate;
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** Parses a positive integer flag or variable; `what` names it in the error. */
export function parsePositiveInt(value: string, what: string, code: 'CAIRN_USAGE' | 'CAIRN_CONFIG' = 'CAIRN_USAGE'): number {
  // Decimal digits only: Number() also reads "0x10", "1e3", " 4 " and "0b11".
  const n = /^[0-9]+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < 1) throw cliError(code, `${what} must be a positive integer, got "${value}".`, 'Pass a whole number such as 4.');
  return n;
}

function parseBool(value: string, what: string): boolean {
  if (/^(1|true|yes)$/i.test(value)) return true;
  if (/^(0|false|no|)$/i.test(value)) return false;
  throw cliError('CAIRN_CONFIG', `${what} must be true or false, got "${value}".`, 'Use 1/true or 0/false.');
}

/**
 * An executor name a setting refers to must be a built-in or a configured executor: otherwise
 * `CAIRN_EXECUTOR` naming the nearest and every known one (the runner's rule, checked before
 * anything runs, also by `cairn config`).
 */
function checkExecutorRef(value: unknown, where: string, configured: readonly string[]): void {
  const known = [...new Set([...builtinExecutors.map((b) => b.name), ...configured])];
  if (typeof value !== 'string' || value === '') {
    throw new CairnError('CAIRN_CONFIG', `${where} must be the name of an executor (one of ${known.join(', ')}), got ${describeValue(value)}.`);
  }
  if (known.includes(value)) return;
  const near = nearestName(value, known);
  throw new CairnError('CAIRN_EXECUTOR', `${where}: no executor named "${value}"${near !== undefined ? `; did you mean "${near}"?` : '.'} Known: ${known.join(', ')}. Add it under executors in the config file, or fix the name.`);
}

function checkFileConfig(value: unknown, file: string): CairnConfig {
  const bad = (what: string): never => {
    throw new CairnError('CAIRN_CONFIG', `${file}: ${what}. Fix the config file (settings: https://github.com/cairn-pipelines/cairn/tree/main/packages/cli#configuration-and-precedence).`);
  };
  if (typeof value !== 'object' || value === null) bad('the default export must be an object (export default defineConfig({ … }))');
  const c = value as Record<string, unknown>;
  const known = new Set(['prefix', 'maxConcurrent', 'executors', 'remoteExecutor', 'stores', 'pools', 'defaults', 'forceRunFailed', 'layout', 'onDrift', 'versions', 'leases', 'notify', 'secrets']);
  for (const k of Object.keys(c)) if (!known.has(k)) bad(`unknown setting "${k}" (known: ${[...known].join(', ')})`);
  // An empty or blank prefix is refused by resolvePrefix (CAIRN_INVALID_PATH), as from a flag or CAIRN_PREFIX.
  if (c.prefix !== undefined && typeof c.prefix !== 'string') bad(`prefix must be a string, got ${c.prefix === null ? 'null' : typeof c.prefix}`);
  if (c.maxConcurrent !== undefined && !(Number.isInteger(c.maxConcurrent) && (c.maxConcurrent as number) >= 1)) bad('maxConcurrent must be a positive integer');
  if (c.forceRunFailed !== undefined && typeof c.forceRunFailed !== 'boolean') bad('forceRunFailed must be a boolean');
  if (c.layout !== undefined && c.layout !== 'content' && c.layout !== 'versioned') bad(`layout must be "content" or "versioned", got ${JSON.stringify(c.layout)}`);
  if (c.onDrift !== undefined && c.onDrift !== 'error' && c.onDrift !== 'warn') bad(`onDrift must be "error" or "warn", got ${JSON.stringify(c.onDrift)}`);
  if (c.versions !== undefined && c.versions !== 'free' && c.versions !== 'calendar') bad(`versions must be "free" or "calendar", got ${JSON.stringify(c.versions)}`);
  if (c.executors !== undefined) {
    if (typeof c.executors !== 'object' || c.executors === null || Array.isArray(c.executors)) bad('executors must be an object keyed by executor name, e.g. { threads: { options: { maxThreads: 8 } } }');
    for (const [name, e] of Object.entries(c.executors as object)) {
      if (typeof e !== 'object' || e === null || Array.isArray(e)) bad(`executors.${name} must be an object such as { use: 'process', options: { … } } (or {} for a built-in's defaults), got ${e === null ? 'null' : Array.isArray(e) ? 'an array' : typeof e}`);
      for (const k of Object.keys(e as object)) if (k !== 'use' && k !== 'options') bad(`executors.${name} has an unknown key "${k}" (known: use, options)`);
      const use = (e as ExecutorConfig).use;
      if (use !== undefined && typeof use !== 'string' && typeof use !== 'function' && (typeof use !== 'object' || use === null || typeof (use as { create?: unknown }).create !== 'function')) {
        bad(`executors.${name}.use must be a built-in's name ('inline', 'threads', 'process'), an executor factory ({ name, create }) or a create function`);
      }
      if (typeof use === 'string') checkExecutorRef(use, `${file}: executors.${name}.use`, []);
      const opts = (e as ExecutorConfig).options;
      if (opts !== undefined && (typeof opts !== 'object' || opts === null || Array.isArray(opts))) bad(`executors.${name}.options must be an object`);
    }
  }
  if (c.remoteExecutor !== undefined) checkExecutorRef(c.remoteExecutor, `${file}: remoteExecutor`, Object.keys((c.executors as object | undefined) ?? {}));
  if (c.stores !== undefined) {
    if (typeof c.stores !== 'object' || c.stores === null || Array.isArray(c.stores)) bad('stores must be an object keyed by store name, e.g. { s3: { use: s3StoreFactory, options: { endpoint } } }');
    for (const [name, e] of Object.entries(c.stores as object)) {
      const use = (e as { use?: unknown } | null)?.use;
      if (typeof use !== 'function' && (typeof use !== 'object' || use === null || typeof (use as { create?: unknown }).create !== 'function')) bad(`stores.${name}.use must be a store factory (s3StoreFactory()) or the function that makes one (s3StoreFactory)`);
      const opts = (e as { options?: unknown }).options;
      if (opts !== undefined && (typeof opts !== 'object' || opts === null)) bad(`stores.${name}.options must be an object`);
    }
  }
  if (c.pools !== undefined) {
    if (typeof c.pools !== 'object' || c.pools === null) bad('pools must be an object of name → capacity');
    for (const [k, v] of Object.entries(c.pools as object)) if (!(typeof v === 'number' && v >= 0)) bad(`pools.${k} must be a non-negative number`);
  }
  if (c.defaults !== undefined && (typeof c.defaults !== 'object' || c.defaults === null)) bad('defaults must be an object');
  // The runner's own check of its `leases` option (the same rules, the same messages).
  if (c.leases !== undefined) {
    try {
      checkStepRunnerOptions({ leases: c.leases });
    } catch (err) {
      bad((err as Error).message.replace(/^new StepRunner\(\): /, ''));
    }
  }
  // The runner's own check; a webhook URL that is not http(s) stays CAIRN_NOTIFY_URL.
  if (c.notify !== undefined) checkNotifyOptions(c.notify, `${file}: notify`);
  if (c.secrets !== undefined) checkSecretsOptions(c.secrets, `${file}: secrets`);
  return c as CairnConfig;
}

/**
 * Loads the effective configuration. Precedence, highest first: flags, environment
 * (`CAIRN_PREFIX`, `CAIRN_MAX_CONCURRENT`, `CAIRN_EXECUTOR`, `CAIRN_FORCE_RUN_FAILED`,
 * `CAIRN_CONFIG`), the config file, built-in defaults.
 */
export async function loadConfig(flags: ConfigFlags = {}, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): Promise<EffectiveConfig> {
  const explicit = flags.config ?? env.CAIRN_CONFIG;
  const file = explicit !== undefined ? resolve(cwd, explicit) : findConfigFile(cwd);
  let fromFile: CairnConfig = {};
  if (file !== undefined) {
    const { module } = await importUserModule(file, 'config', cwd);
    fromFile = checkFileConfig(module.default ?? module.config, file);
  }
  const fileDir = file !== undefined ? dirname(file) : cwd;

  let prefix: string | undefined;
  let prefixSource: ConfigSource = 'default';
  // Core's resolver, the runner's own: an empty CAIRN_PREFIX is refused, as the runner refuses it.
  if (flags.prefix !== undefined) [prefix, prefixSource] = [resolvePrefix(flags.prefix, '--prefix', cwd), 'flag'];
  else if (env.CAIRN_PREFIX !== undefined) [prefix, prefixSource] = [resolvePrefix(env.CAIRN_PREFIX, 'CAIRN_PREFIX', cwd), 'env'];
  else if (fromFile.prefix !== undefined) [prefix, prefixSource] = [resolvePrefix(fromFile.prefix, `${file}: prefix`, fileDir), 'file'];

  let maxConcurrent: number = RUNNER_DEFAULTS.maxConcurrent;
  let mcSource: ConfigSource = 'default';
  if (flags.maxConcurrent !== undefined) [maxConcurrent, mcSource] = [flags.maxConcurrent, 'flag'];
  else if (env.CAIRN_MAX_CONCURRENT) [maxConcurrent, mcSource] = [parsePositiveInt(env.CAIRN_MAX_CONCURRENT, 'CAIRN_MAX_CONCURRENT', 'CAIRN_CONFIG'), 'env'];
  else if (fromFile.maxConcurrent !== undefined) [maxConcurrent, mcSource] = [fromFile.maxConcurrent, 'file'];

  let executor: string = RUNNER_DEFAULTS.defaultExecutor;
  let exSource: ConfigSource = 'default';
  if (flags.executor !== undefined) [executor, exSource] = [flags.executor, 'flag'];
  else if (env.CAIRN_EXECUTOR) [executor, exSource] = [env.CAIRN_EXECUTOR, 'env'];
  else if (fromFile.defaults?.executor !== undefined) [executor, exSource] = [fromFile.defaults.executor, 'file'];

  let forceRunFailed: boolean = RUNNER_DEFAULTS.forceRunFailed;
  let frSource: ConfigSource = 'default';
  if (flags.forceRunFailed !== undefined) [forceRunFailed, frSource] = [flags.forceRunFailed, 'flag'];
  else if (env.CAIRN_FORCE_RUN_FAILED !== undefined) [forceRunFailed, frSource] = [parseBool(env.CAIRN_FORCE_RUN_FAILED, 'CAIRN_FORCE_RUN_FAILED'), 'env'];
  else if (fromFile.forceRunFailed !== undefined) [forceRunFailed, frSource] = [fromFile.forceRunFailed, 'file'];

  return {
    file,
    prefix,
    maxConcurrent,
    executor,
    forceRunFailed,
    executors: fromFile.executors ?? {},
    remoteExecutor: fromFile.remoteExecutor,
    stores: fromFile.stores ?? {},
    pools: fromFile.pools ?? {},
    defaults: fromFile.defaults ?? {},
    layout: fromFile.layout ?? RUNNER_DEFAULTS.layout,
    onDrift: fromFile.onDrift ?? RUNNER_DEFAULTS.onDrift,
    versions: fromFile.versions ?? RUNNER_DEFAULTS.versions,
    leases: fromFile.leases,
    leaseTiming: leaseTiming(fromFile.leases),
    notify: fromFile.notify,
    secrets: fromFile.secrets,
    sources: { prefix: prefixSource, maxConcurrent: mcSource, executor: exSource, forceRunFailed: frSource },
  };
}

/** The prefix, or a usage error saying how to set one. */
export function requirePrefix(config: EffectiveConfig): string {
  if (config.prefix === undefined) {
    throw cliError('CAIRN_CONFIG', 'No store prefix is set.', 'Pass --prefix DIR, set CAIRN_PREFIX, or set prefix in cairn.config.ts.');
  }
  return config.prefix;
}
