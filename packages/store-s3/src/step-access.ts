/**
 * What a running step gets of the S3 store besides its local output directory: `ctx.store`
 * ({@link S3StepAccess}: the configured client, and the bucket and key of the step's `s3://`
 * output URL, for direct writes) and `ctx.localInput(dep)` (a dependency's outputs downloaded to
 * a local directory once per host, cached by identity). In the runner's process the store hands
 * over its own primitives; a worker in another thread, process or host builds primitives from the
 * plain options the task carries, which never hold credentials (task files are written to disk
 * and uploaded with the attempt): there credentials come from the standard AWS configuration.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { CairnError, type StepContext } from '@cairn/core';
import type { StepAccessRef, StepStoreAccess } from '@cairn/runner/store';
import { checkS3StoreOptions } from './options.js';
import { LEASE_FILE } from './layout.js';
import { S3Primitives, type S3PrimitivesOptions, stepDir } from './primitives.js';

/** `ctx.store` of a step on an S3 store. */
export interface S3StepAccess {
  /** The store's configured client (endpoint, region, credentials, retries). */
  readonly client: S3Client;
  /** The bucket of the step's output URL. */
  readonly bucket: string;
  /**
   * Where to write objects, with its trailing `/`: the running attempt's own prefix inside the
   * step's output directory (`{outputPath}/@{runId}/`, see the package README "Outputs"). They
   * are published with the attempt's local outputs when it commits, and never seen by readers
   * otherwise.
   */
  readonly key: string;
  /** The step's final output URL (`s3://bucket/prefix/step-hash`). */
  readonly url: string;
}

/** Options that reach workers: where the store is and how to talk to it, nothing secret. */
const WORKER_KEYS = ['endpoint', 'region', 'forcePathStyle', 'profile', 'retry', 'connectTimeoutMs', 'requestTimeoutMs', 'maxSockets', 'cacheDir'] as const;

/** The options of `options` a worker may be given (credentials, loggers and counters are not). */
export function workerOptions(options: S3PrimitivesOptions): S3PrimitivesOptions {
  const out: Record<string, unknown> = {};
  for (const k of WORKER_KEYS) if (options[k] !== undefined) out[k] = options[k];
  return out as S3PrimitivesOptions;
}

/**
 * The step access of the step writing to `path` in the run `runId` (the lease holder's; unknown
 * when only reading), through `s3`. Paths that are not `s3://` URLs are local already.
 */
export function stepAccessOf(s3: S3Primitives, path: string, runId?: string): StepStoreAccess {
  return { store: s3.direct(path, runId) satisfies S3StepAccess, localInput: (dep) => (dep.startsWith('s3://') ? s3.localInput(dep) : Promise.resolve(dep)) };
}

/** What the store's tasks name for workers: this module's {@link createStepAccess}, with `options`. */
export function stepAccessRef(options: S3PrimitivesOptions): StepAccessRef {
  return { module: '@cairn/store-s3', export: 'createStepAccess', options: workerOptions(options) };
}

/** Primitives of this worker, by their options: one client per configuration, shared by every task. */
const byOptions = new Map<string, S3Primitives>();

/**
 * The builder a worker re-imports from a task (`task.storeAccess`): `(options, path)` → the
 * step's access. The task names only the step's final URL, so the attempt's prefix for
 * `ctx.store` comes from the run id of the step's lease holder (one GET of the lease object).
 */
export async function createStepAccess(options: unknown, path: string): Promise<StepStoreAccess> {
  const key = JSON.stringify(options ?? {});
  let s3 = byOptions.get(key);
  if (s3 === undefined) {
    s3 = new S3Primitives(workerOptions(checkS3StoreOptions(options, 'the task\'s store access')));
    byOptions.set(key, s3);
  }
  if (!path.startsWith('s3://')) return stepAccessOf(s3, path);
  const d = stepDir(path);
  let runId: string | undefined;
  let failure: unknown;
  try {
    runId = (await s3.leases.read(d.bucket, d.dir + LEASE_FILE))?.holder?.runId;
  } catch (err) {
    failure = err;
  }
  const access = stepAccessOf(s3, path, runId);
  if (runId !== undefined) return access;
  // Without the run, direct writes would go where no commit publishes them: only ctx.store fails.
  const why = failure ?? new CairnError('CAIRN_LEASE_LOST', `ctx.store of ${path}: the step's lease is gone (taken over, or released), so this attempt's objects could never be published. The runner retries the step under a new lease.`, { retryable: true });
  return {
    localInput: access.localInput,
    get store(): never {
      throw why;
    },
  };
}

/**
 * `ctx.store` of a step on an S3 store, typed. Throws `CAIRN_STORE` naming the step when its
 * store is not an S3 store (a local prefix, or an executor that provides no store access).
 */
export function stepS3(ctx: Pick<StepContext, 'name' | 'store'>): S3StepAccess {
  const s = ctx.store as Partial<S3StepAccess> | undefined;
  if (s === undefined || s === null || typeof s.bucket !== 'string' || typeof s.key !== 'string' || s.client === undefined) {
    throw new CairnError('CAIRN_STORE', `Step "${ctx.name}": ctx.store is not an S3 store's (${s === undefined ? 'absent' : 'another store\'s'}); run it with an s3:// prefix (stores: [s3StoreFactory()]), or write its outputs to ctx.outputPath.`, { step: ctx.name });
  }
  return s as S3StepAccess;
}
