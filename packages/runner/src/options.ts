/**
 * Pure validators of `new StepRunner(options)` and `run(steps, options)`: every option is
 * checked for its type and range, and an unknown key (a typo, an option of another version,
 * a key from a config file) is `CAIRN_UNKNOWN_OPTION` naming the nearest known one. TypeScript
 * catches most of this; a JavaScript pipeline or a JSON config does not, and an ignored option
 * fails silently later. Messages show the value's type, so `maxConcurrent: "4"` reads as a
 * string. No I/O: the runner calls these before it does anything.
 */
import { CairnError, checkExecutorName, checkKnownKeys, describeValue, isArtifactStep, isStepSpec, nearestName, resolvePrefix } from '@cairn/core';
import { checkNotifyOptions } from './notify/check.js';
import { checkSecretsOptions } from './secrets/check.js';
import type { RunOptions, StepRunnerOptions } from './runner.js';

/** Executors every runner has. */
const BUILTIN_EXECUTORS = ['inline', 'threads', 'process'] as const;

/** The pools the runner draws on (a step's `gpus`, `memoryGb`, `cpu`). */
export const POOL_NAMES: readonly string[] = Object.freeze(['gpu', 'memoryGb', 'cpu']);

const EXECUTOR_METHODS = ['start', 'submit', 'poll', 'cancel', 'stop'] as const;
const STORE_METHODS = ['readStates', 'checkWritable', 'createLease', 'readLease', 'refreshLease', 'breakLease', 'releaseLease', 'stage', 'commit', 'abandon', 'sweep', 'writeJob', 'readJob', 'removeJob', 'attemptLogs'] as const;
const LEASE_KEYS: ReadonlySet<string> = new Set(['heartbeatMs', 'staleMs', 'pollMs', 'unreadableGraceMs']);

/** The longest delay a Node timer honours (2^31-1 ms); a longer one fires at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

type Check<O> = (value: unknown, where: string, all: O) => void;

/** `where` is the option's path (`new StepRunner(): leases.staleMs`); `what` says what it must be. */
function fail(where: string, what: string): never {
  throw new CairnError('CAIRN_CONFIG', `${where} ${what}`);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null) return false;
  const p = Object.getPrototypeOf(v) as object | null;
  return p === Object.prototype || p === null;
}

function positiveInt(value: unknown, where: string): void {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) fail(where, `must be a positive integer such as 8, got ${describeValue(value)}.`);
}

function boolean(value: unknown, where: string): void {
  if (typeof value !== 'boolean') fail(where, `must be true or false, got ${describeValue(value)}.`);
}

function positiveMs(value: unknown, where: string): void {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) fail(where, `must be a positive number of milliseconds, got ${describeValue(value)}.`);
}

/** A URL scheme as a factory declares it: lower-case, without `://`. */
const SCHEME = /^[a-z][a-z0-9+.-]*$/;

/** Checks each store factory of `stores`: a name, its schemes as data, a create function; no scheme served twice. */
function storeFactories(value: unknown, where: string): string[] {
  if (!Array.isArray(value)) fail(where, `must be a list of store factories such as [s3StoreFactory()], got ${describeValue(value)}.`);
  const names: string[] = [];
  const served = new Map<string, string>();
  value.forEach((f: unknown, i) => {
    const at = `${where}[${i}]`;
    if (typeof f !== 'object' || f === null) fail(at, `must be a store factory ({ name, schemes, create }), got ${describeValue(f)}.`);
    const o = f as Record<string, unknown>;
    if (typeof o.name !== 'string' || o.name === '') fail(`${at}.name`, `must be a non-empty string, got ${describeValue(o.name)}.`);
    if (typeof o.create !== 'function') fail(at, `(store "${o.name}") has no create function; a store factory is { name, schemes, create(options, prefix) }. Pass a ready store as store: instead.`);
    if (!Array.isArray(o.schemes) || o.schemes.length === 0) fail(`${at}.schemes`, `(store "${o.name}") must list the URL schemes it serves, such as ['s3'], got ${describeValue(o.schemes)}.`);
    for (const s of o.schemes as unknown[]) {
      if (typeof s !== 'string' || !SCHEME.test(s)) fail(`${at}.schemes`, `(store "${o.name}") holds ${describeValue(s)}; write each scheme lower-case without "://", such as 's3'.`);
      const other = served.get(s);
      if (other !== undefined) fail(`${at}.schemes`, `(store "${o.name}") serves ${s}://, which store "${other}" already serves; register one store per scheme.`);
      served.set(s, o.name);
    }
    if (names.includes(o.name)) fail(at, `is a second store named "${o.name}"; give each a unique name.`);
    names.push(o.name);
  });
  return names;
}

/** Names of the executors `executors` registers (in order), after checking each entry's shape. */
function executorNames(value: unknown, where: string): string[] {
  const entries: [string, unknown][] = [];
  if (Array.isArray(value)) value.forEach((e, i) => entries.push([(e as { name?: unknown } | null)?.name as string, e]));
  else if (isPlainObject(value)) for (const [k, e] of Object.entries(value)) entries.push([k, e]);
  else fail(where, `must be a list of executors or factories, or an object of them by name, got ${describeValue(value)}.`);
  const names: string[] = [];
  entries.forEach(([name, e], i) => {
    const at = Array.isArray(value) ? `${where}[${i}]` : `${where}.${String(name)}`;
    if (typeof e !== 'object' || e === null) fail(at, `must be an executor ({ name, capabilities, start, submit, … }) or a factory ({ name, create }), got ${describeValue(e)}.`);
    checkExecutorName(name, `${at}.name`, 'CAIRN_CONFIG');
    const o = e as Record<string, unknown>;
    if (typeof o.create === 'function') {
      // A factory: nothing more to check before it is used.
    } else if (typeof o.submit === 'function') {
      const missing = EXECUTOR_METHODS.filter((m) => typeof o[m] !== 'function');
      if (missing.length > 0) fail(at, `(executor "${name}") has no ${missing.join(', ')} method; an executor implements start, submit, poll, cancel and stop.`);
      if (typeof o.capabilities !== 'object' || o.capabilities === null) fail(at, `(executor "${name}") has no capabilities object; declare { remote, sharedFs, deploysCode, inProcess, cancel, logs, resumable }.`);
    } else fail(at, `must be an executor (with submit) or a factory (with create), got an object with neither.`);
    if (names.includes(name)) fail(at, `is a second executor named "${name}"; give each a unique name.`);
    names.push(name);
  });
  return names;
}

/** Every executor name a runner built from `options` would know (built-ins, then the given ones). */
function knownExecutors(options: Readonly<Record<string, unknown>>): string[] {
  const given = options.executors === undefined ? [] : executorNames(options.executors, 'new StepRunner(): executors');
  return [...new Set([...BUILTIN_EXECUTORS, ...given])];
}

function executorRef(value: unknown, where: string, all: Readonly<Record<string, unknown>>): void {
  const name = checkExecutorName(value, where, 'CAIRN_CONFIG');
  const known = knownExecutors(all);
  if (known.includes(name)) return;
  const near = nearestName(name, known);
  throw new CairnError(
    'CAIRN_EXECUTOR',
    `${where}: no executor named "${name}"${near ? `; did you mean "${near}"?` : '.'} Registered: ${known.join(', ')}. Register it with new StepRunner({ executors: [...] }) or fix the name.`,
  );
}

const RUNNER_CHECKS = {
  maxConcurrent: (v, where) => positiveInt(v, where),
  prefix: (v) => void resolvePrefix(v, 'new StepRunner(): prefix'),
  executors: (v, where) => void executorNames(v, where),
  executorOptions: (v, where, all) => {
    if (!isPlainObject(v)) fail(where, `must be an object of options by executor name, e.g. { threads: { maxThreads: 4 } }, got ${describeValue(v)}.`);
    const known = knownExecutors(all);
    checkKnownKeys(v, known, where);
    const given = all.executors;
    for (const name of Object.keys(v)) {
      const entry = Array.isArray(given) ? given.find((e) => (e as { name?: unknown })?.name === name) : isPlainObject(given) ? given[name] : undefined;
      if (entry !== undefined && typeof (entry as { create?: unknown }).create !== 'function') {
        fail(`${where}.${name}`, `is never used: executor "${name}" was given as an instance, and options go to factories; pass its factory ({ name, create }) instead, or configure the instance directly.`);
      }
    }
  },
  pools: (v, where) => {
    if (!isPlainObject(v)) fail(where, `must be an object of capacities such as { gpu: 2, memoryGb: 64 }, got ${describeValue(v)}.`);
    checkKnownKeys(v, POOL_NAMES, where);
    for (const [k, n] of Object.entries(v)) if (typeof n !== 'number' || Number.isNaN(n) || n < 0) fail(`${where}.${k}`, `must be a non-negative number, got ${describeValue(n)}.`);
  },
  defaultExecutor: (v, where, all) => executorRef(v, where, all),
  remoteExecutor: (v, where, all) => executorRef(v, where, all),
  stores: (v, where) => void storeFactories(v, where),
  storeOptions: (v, where, all) => {
    if (!isPlainObject(v)) fail(where, `must be an object of options by store name, e.g. { s3: { endpoint: 'http://127.0.0.1:7480' } }, got ${describeValue(v)}.`);
    const known = ['local', ...(all.stores === undefined ? [] : storeFactories(all.stores, 'new StepRunner(): stores'))];
    checkKnownKeys(v, known, where);
  },
  store: (v, where) => {
    if (v === 'local' || v === 'memory') return;
    if (typeof v !== 'object' || v === null) fail(where, `must be 'local', 'memory' or a Store object, got ${describeValue(v)}.`);
    const o = v as Record<string, unknown>;
    const missing = STORE_METHODS.filter((m) => typeof o[m] !== 'function');
    if (missing.length > 0 || typeof o.kind !== 'string') fail(where, `is not a Store (it lacks ${[...(typeof o.kind !== 'string' ? ['kind'] : []), ...missing].join(', ')}); pass 'local', 'memory' or an object implementing Store.`);
  },
  logger: (v, where) => {
    const o = v as Record<string, unknown> | null;
    if (typeof o !== 'object' || o === null || ['info', 'warn', 'error'].some((m) => typeof o[m] !== 'function')) fail(where, `must be an object with info, warn and error functions, got ${describeValue(v)}.`);
  },
  onEvent: (v, where) => {
    if (typeof v !== 'function') fail(where, `must be a function receiving each progress event, got ${describeValue(v)}.`);
  },
  leases: (v, where) => {
    if (!isPlainObject(v)) fail(where, `must be an object such as { heartbeatMs: 30000, staleMs: 90000 }, got ${describeValue(v)}.`);
    checkKnownKeys(v, LEASE_KEYS, where);
    for (const k of LEASE_KEYS) if (v[k] !== undefined) positiveMs(v[k], `${where}.${k}`);
    // These two are timers: Node fires a timer longer than 2^31-1 ms at once (pollMs: 2**31 polled every 1 ms).
    for (const k of ['heartbeatMs', 'pollMs']) {
      if (typeof v[k] === 'number' && (v[k] as number) > MAX_TIMER_MS) fail(`${where}.${k}`, `must be at most ${MAX_TIMER_MS} ms (about 24.8 days; a longer Node timer fires at once), got ${v[k] as number}.`);
    }
    const heartbeat = (v.heartbeatMs as number | undefined) ?? 30_000;
    const stale = (v.staleMs as number | undefined) ?? 90_000;
    // A lease refreshed less often than it goes stale is taken over while its holder still runs.
    if (stale <= heartbeat) fail(`${where}.staleMs`, `(${stale}) must be larger than heartbeatMs (${heartbeat}), or every held lease looks stale and another runner takes the step over while it runs.`);
  },
  infraRetries: (v, where) => {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) fail(where, `must be a non-negative integer (infrastructure failures retried per step), got ${describeValue(v)}.`);
  },
  preemptionRetries: (v, where) => {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) fail(where, `must be a non-negative integer (preempted attempts retried per step), got ${describeValue(v)}.`);
  },
  preemptionBackoffMs: (v, where) => {
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) fail(where, `must be a number of milliseconds ≥ 0 (the wait after a step's first preemption), got ${describeValue(v)}.`);
  },
  layout: (v, where) => {
    if (v !== 'content' && v !== 'versioned') fail(where, `must be "content" ({name}/{version}-{hash}, the default) or "versioned" ({name}/{version}, Marin's fixed paths), got ${describeValue(v)}.`);
  },
  onDrift: (v, where) => {
    if (v !== 'error' && v !== 'warn') fail(where, `must be "error" (a drifted step fails, the default) or "warn" (it is served with a warning, as in Marin), got ${describeValue(v)}.`);
  },
  versions: (v, where) => {
    if (v !== 'free' && v !== 'calendar') fail(where, `must be "free" (any version, the default) or "calendar" (Marin's YYYY.MM.DD[.N], "dev" or "…-dev"), got ${describeValue(v)}.`);
  },
  notify: (v, where) => void checkNotifyOptions(v, where),
  secrets: (v, where) => void checkSecretsOptions(v, where),
  journal: (v, where) => boolean(v, where),
} satisfies Record<keyof StepRunnerOptions, Check<Readonly<Record<string, unknown>>>>;

const RUN_CHECKS = {
  dryRun: (v, where) => boolean(v, where),
  forceRunFailed: (v, where) => boolean(v, where),
  maxConcurrent: (v, where) => positiveInt(v, where),
  signal: (v, where) => {
    const s = v as { aborted?: unknown; addEventListener?: unknown } | null;
    if (typeof s !== 'object' || s === null || typeof s.aborted !== 'boolean' || typeof s.addEventListener !== 'function') fail(where, `must be an AbortSignal (e.g. new AbortController().signal), got ${describeValue(v)}.`);
  },
  handleSigint: (v, where) => boolean(v, where),
  rebuild: (v, where) => {
    if (v === 'all') return;
    if (!Array.isArray(v)) fail(where, `must be 'all' or a list of steps, handles or step names, got ${describeValue(v)}.`);
    selectors(v, where);
  },
  acceptDrift: (v, where) => {
    if (typeof v === 'boolean') return;
    if (!Array.isArray(v)) fail(where, `must be true (every drifted step) or a list of steps, handles or step names, got ${describeValue(v)}.`);
    selectors(v, where);
  },
} satisfies Record<keyof RunOptions, Check<Readonly<Record<string, unknown>>>>;

/** The items of a list of steps (`rebuild`, `acceptDrift`): specs, handles, non-empty names. */
function selectors(list: readonly unknown[], where: string): void {
  for (let i = 0; i < list.length; i++) {
    const r = list[i];
    const ok = typeof r === 'string' ? r !== '' : isStepSpec(r) || isArtifactStep(r);
    if (!ok) fail(`${where}[${i}]`, `must be a step, a handle or a non-empty step name (name, name@version or name-hash), got ${describeValue(r)}.`);
  }
}

function checkAll(value: unknown, checks: Readonly<Record<string, Check<Readonly<Record<string, unknown>>>>>, where: string): void {
  if (value === undefined) return;
  if (!isPlainObject(value)) fail(`${where}:`, `options must be a plain object, got ${describeValue(value)}.`);
  const known = Object.keys(checks);
  checkKnownKeys(value, known, where);
  for (const key of known) {
    const v = value[key];
    if (v !== undefined) (checks[key] as Check<Readonly<Record<string, unknown>>>)(v, `${where}: ${key}`, value);
  }
}

/**
 * Checks the options of `new StepRunner(options)`: unknown keys (`CAIRN_UNKNOWN_OPTION`, with
 * the nearest known one), types and ranges (`CAIRN_CONFIG`, showing the value's type), the
 * prefix (`CAIRN_INVALID_PATH`, see `resolvePrefix`), executor names (their form, and that
 * `defaultExecutor`/`remoteExecutor` name a built-in or given executor: `CAIRN_EXECUTOR`), pool
 * names (`gpu`, `memoryGb`, `cpu`) and lease timing. Returns the options unchanged.
 */
export function checkStepRunnerOptions(options: unknown): StepRunnerOptions {
  checkAll(options, RUNNER_CHECKS, 'new StepRunner()');
  return (options ?? {}) as StepRunnerOptions;
}

/** Checks the options of `run(steps, options)` (and `plan`, `load`) like {@link checkStepRunnerOptions}. Returns them unchanged. */
export function checkRunOptions(options: unknown, where = 'run()'): RunOptions {
  checkAll(options, RUN_CHECKS, where);
  return (options ?? {}) as RunOptions;
}
