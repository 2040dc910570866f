/**
 * Options of the Ray executor, their defaults and the environment variables they fall back to.
 * Unknown keys are refused naming the nearest known one (`CAIRN_UNKNOWN_OPTION`).
 */
import { CairnError, checkKnownKeys } from '@cairn/core';
import type { RayStoreCredentials } from './object-store.js';

/** A Ray runtime environment, as data (Ray's own names are given beside each field). */
export interface RayRuntimeEnv {
  /** `working_dir`: a directory (or a remote URI) the job starts in; Ray uploads a local one. */
  readonly workingDir?: string;
  /** `env_vars`: environment variables of the job. */
  readonly envVars?: Readonly<Record<string, string>>;
  /** `pip`: Python packages installed for the job (Python steps). */
  readonly pip?: readonly string[];
}

/**
 * What a step may ask of Ray, under `resources.hints.ray` (the rest of its resources map to Ray's
 * as documented in the README: `cpu` → `entrypoint_num_cpus`, `gpus` → `entrypoint_num_gpus`,
 * `memoryGb` → `entrypoint_memory`).
 */
export interface RayStepHints {
  /** Custom resources (`entrypoint_resources`), e.g. `{ TPU: 4 }`. */
  readonly resources?: Readonly<Record<string, number>>;
  /** The step's runtime environment, merged over the executor's (`envVars` merged key by key). */
  readonly runtimeEnv?: RayRuntimeEnv;
}

/** Options of {@link createRayExecutor}. */
export interface RayExecutorOptions {
  /** Registry name (a step's `executor`). @default 'ray' */
  readonly name?: string;
  /** The dashboard's address (the Jobs API), e.g. `http://head:8265`. @default $RAY_API_SERVER_ADDRESS, else $RAY_ADDRESS when it is an http(s) URL */
  readonly address?: string;
  /** A bearer token sent as `Authorization: Bearer …`. @default $RAY_AUTH_TOKEN */
  readonly token?: string;
  /** Extra headers on every request (a proxy's authentication, say). @default {} */
  readonly headers?: Readonly<Record<string, string>>;
  /** `node` on the Ray nodes, for steps run through Cairn's worker entry. @default 'node' */
  readonly nodePath?: string;
  /** The runner's worker entry as the Ray nodes see it (a shared filesystem). @default this runner's `dist/worker-entry.js` */
  readonly workerEntry?: string;
  /** The runtime environment of every job (a step's `hints.ray.runtimeEnv` is merged over it). @default {} */
  readonly runtimeEnv?: RayRuntimeEnv;
  /** Time between status checks (ONE list request for every job of the run). @default 1000 */
  readonly pollIntervalMs?: number;
  /** Per-request timeout. @default 30000 */
  readonly requestTimeoutMs?: number;
  /** The start of every submission id. @default 'cairn' */
  readonly submissionPrefix?: string;
  /** Jobs this executor runs at once. @default the runner's maxConcurrent */
  readonly maxConcurrency?: number;
  /** The Ray nodes see the runner's store at the same paths. @default true */
  readonly sharedFs?: boolean;
  /**
   * How a step that needs a secret gets it. `refuse`: it does not run (`CAIRN_SECRET_UNSAFE`
   * before anything is submitted). `shared-file`: a 0600 file in its attempt directory on the
   * shared filesystem, read and deleted before the step starts; never the entrypoint or
   * `runtime_env`, which the dashboard shows. Every Ray job runs as the nodes' one OS user, so
   * choose it only where everyone who can submit jobs to the cluster may see the secret.
   * @default 'refuse'
   */
  readonly secrets?: RaySecrets;
  /**
   * Without `sharedFs`, with an S3 store: how a job's transfer script gets credentials for the
   * bucket. `node`: the Ray nodes' own `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY` (the
   * environment `ray start` ran in). `runtime-env`: the runner's, in the job's
   * `runtime_env.env_vars`, which the dashboard and the Jobs API show to whoever can reach them:
   * choose it only where everyone who can reach the dashboard may use the bucket (as `secrets: 'shared-file'`).
   * @default 'node'
   */
  readonly storeCredentials?: RayStoreCredentials;
  /** Without `sharedFs`: a directory on every Ray node where a job keeps its files while it runs (removed when it ends). @default '/tmp' */
  readonly nodeTempDir?: string;
}

/** How the Ray executor delivers secrets (see {@link RayExecutorOptions.secrets}). */
export type RaySecrets =
  /** Steps that need a secret do not run on Ray. */
  | 'refuse'
  /** A 0600 file on the shared filesystem, read and deleted before the step starts (trusted clusters). */
  | 'shared-file';

/** Options with defaults applied and the environment read. */
export interface ResolvedRayOptions {
  readonly name: string;
  readonly address: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly nodePath: string;
  readonly workerEntry: string | undefined;
  readonly runtimeEnv: RayRuntimeEnv;
  readonly pollIntervalMs: number;
  readonly requestTimeoutMs: number;
  readonly submissionPrefix: string;
  readonly maxConcurrency: number | undefined;
  readonly sharedFs: boolean;
  readonly secrets: RaySecrets;
  readonly storeCredentials: RayStoreCredentials;
  readonly nodeTempDir: string;
}

/** Every option key, as data (typed against the interface, so none is forgotten). */
const KEYS: { readonly [K in keyof Required<RayExecutorOptions>]: true } = {
  name: true,
  address: true,
  token: true,
  headers: true,
  nodePath: true,
  workerEntry: true,
  runtimeEnv: true,
  pollIntervalMs: true,
  requestTimeoutMs: true,
  submissionPrefix: true,
  maxConcurrency: true,
  sharedFs: true,
  secrets: true,
  storeCredentials: true,
  nodeTempDir: true,
};
const RUNTIME_ENV_KEYS: { readonly [K in keyof Required<RayRuntimeEnv>]: true } = { workingDir: true, envVars: true, pip: true };
/** Ray's built-in resources, with the Cairn resource that asks for each. */
const BUILT_IN_RESOURCES: Readonly<Record<string, string>> = { CPU: 'cpu', GPU: 'gpus', memory: 'memoryGb' };
const HINT_KEYS: { readonly [K in keyof Required<RayStepHints>]: true } = { resources: true, runtimeEnv: true };

/** Checks the keys of a runtime environment (`where` names it in the message). */
export function checkRuntimeEnv(env: unknown, where: string, step?: string): void {
  if (env === undefined) return;
  if (typeof env !== 'object' || env === null) throw new CairnError('CAIRN_CONFIG', `${where} must be an object { workingDir, envVars, pip }.`, { step });
  checkKnownKeys(env, Object.keys(RUNTIME_ENV_KEYS), where, { step });
}

/** Checks a step's `resources.hints.ray`. */
export function checkHints(hints: unknown, step: string): RayStepHints {
  if (hints === undefined) return {};
  if (typeof hints !== 'object' || hints === null) throw new CairnError('CAIRN_INVALID_SPEC', `Step "${step}": resources.hints.ray must be an object { resources, runtimeEnv }.`, { step });
  checkKnownKeys(hints, Object.keys(HINT_KEYS), `Step "${step}": resources.hints.ray`, { step, code: 'CAIRN_INVALID_SPEC' });
  checkRuntimeEnv((hints as RayStepHints).runtimeEnv, `Step "${step}": resources.hints.ray.runtimeEnv`, step);
  for (const [key, own] of Object.entries(BUILT_IN_RESOURCES)) {
    if ((hints as RayStepHints).resources?.[key] !== undefined) {
      throw new CairnError('CAIRN_INVALID_SPEC', `Step "${step}": resources.hints.ray.resources.${key} is Ray's built-in resource; ask for it with resources.${own} (Ray refuses it as a custom resource).`, { step });
    }
  }
  return hints as RayStepHints;
}

const positive = (key: string, v: number | undefined, dflt: number): number => {
  if (v === undefined) return dflt;
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) throw new CairnError('CAIRN_CONFIG', `createRayExecutor(): "${key}" must be a positive number of milliseconds, not ${JSON.stringify(v)}.`);
  return v;
};

function secretsOption(v: unknown, sharedFs: boolean): RaySecrets {
  if (v === undefined) return 'refuse';
  if (v !== 'refuse' && v !== 'shared-file') throw new CairnError('CAIRN_CONFIG', `createRayExecutor(): "secrets" must be 'refuse' or 'shared-file', not ${JSON.stringify(v)}.`);
  if (v === 'shared-file' && !sharedFs) throw new CairnError('CAIRN_CONFIG', `createRayExecutor(): secrets: 'shared-file' needs the Ray nodes to share the runner's filesystem (sharedFs: true).`);
  return v;
}

function storeCredentialsOption(v: unknown): RayStoreCredentials {
  if (v === undefined) return 'node';
  if (v !== 'node' && v !== 'runtime-env') throw new CairnError('CAIRN_CONFIG', `createRayExecutor(): "storeCredentials" must be 'node' or 'runtime-env', not ${JSON.stringify(v)}.`);
  return v;
}

function nodeTempDirOption(v: unknown): string {
  if (v === undefined) return '/tmp';
  if (typeof v !== 'string' || !v.startsWith('/')) throw new CairnError('CAIRN_CONFIG', `createRayExecutor(): "nodeTempDir" must be an absolute path on the Ray nodes, not ${JSON.stringify(v)}.`);
  return v.replace(/\/+$/, '') || '/';
}

/** Applies defaults and the environment; throws `CAIRN_UNKNOWN_OPTION` / `CAIRN_CONFIG` naming the fix. */
export function resolveOptions(options: RayExecutorOptions, env: NodeJS.ProcessEnv = process.env): ResolvedRayOptions {
  checkKnownKeys(options, Object.keys(KEYS), 'createRayExecutor()');
  checkRuntimeEnv(options.runtimeEnv, 'createRayExecutor(): runtimeEnv');
  const fromEnv = env.RAY_API_SERVER_ADDRESS ?? (env.RAY_ADDRESS && /^https?:\/\//.test(env.RAY_ADDRESS) ? env.RAY_ADDRESS : undefined);
  const address = options.address ?? fromEnv;
  if (!address) throw new CairnError('CAIRN_CONFIG', 'createRayExecutor(): no dashboard address. Pass { address: "http://<head>:8265" } or set RAY_API_SERVER_ADDRESS.');
  if (!/^https?:\/\/[^/]/.test(address)) throw new CairnError('CAIRN_CONFIG', `createRayExecutor(): the address ${JSON.stringify(address)} is not an http(s) URL; give the dashboard's, e.g. "http://<head>:8265" (not the GCS address "<head>:6379").`);
  const token = options.token ?? env.RAY_AUTH_TOKEN;
  return {
    name: options.name ?? 'ray',
    address: address.replace(/\/+$/, ''),
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...options.headers },
    nodePath: options.nodePath ?? 'node',
    workerEntry: options.workerEntry,
    runtimeEnv: options.runtimeEnv ?? {},
    pollIntervalMs: positive('pollIntervalMs', options.pollIntervalMs, 1000),
    requestTimeoutMs: positive('requestTimeoutMs', options.requestTimeoutMs, 30_000),
    submissionPrefix: options.submissionPrefix ?? 'cairn',
    maxConcurrency: options.maxConcurrency,
    sharedFs: options.sharedFs ?? true,
    secrets: secretsOption(options.secrets, options.sharedFs ?? true),
    storeCredentials: storeCredentialsOption(options.storeCredentials),
    nodeTempDir: nodeTempDirOption(options.nodeTempDir),
  };
}
