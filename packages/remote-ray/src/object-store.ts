/**
 * What a Ray job without the runner's filesystem needs to know of an S3 store (`@cairn/store-s3`):
 * the bucket, the attempt's own key prefix (`{output}/@{runId}/`, where its objects stay invisible
 * to readers until the runner's commit names it in the record) and where the store is (endpoint,
 * region, path style). Read from the step access the store hands the runner (`job.storeAccess`:
 * `ctx.store`'s `{ client, bucket, key }`), so the node never reads the lease to learn the prefix.
 *
 * Credentials reach the node only with `storeCredentials: 'runtime-env'` (the runner's own, in the
 * job's `runtime_env.env_vars`, which the dashboard and the Jobs API show: trusted clusters only,
 * the same rule as `secrets: 'shared-file'`); by default the nodes use their own `AWS_*`.
 */
import { CairnError } from '@cairn/core';
import type { JobRequest } from './runner-api.js';

/** How a Ray node gets credentials for the store (see {@link RayExecutorOptions.storeCredentials}). */
export type RayStoreCredentials =
  /** The nodes' own `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY` (/ `AWS_SESSION_TOKEN`), from the environment `ray start` ran in. */
  | 'node'
  /** The runner's, in the job's `runtime_env.env_vars`: visible to whoever can reach the dashboard (trusted clusters only). */
  | 'runtime-env';

/** The store as a job on a Ray node sees it. */
export interface FarStore {
  /** The bucket of the step's output. */
  readonly bucket: string;
  /** The attempt's key prefix, ending in `/` (`{output}/@{runId}/`). */
  readonly attemptPrefix: string;
  /** Where the store is, for the node's transfer script (`CAIRN_S3_ENDPOINT`, `CAIRN_S3_REGION`, `CAIRN_S3_PATH_STYLE`): no secret. */
  readonly where: Readonly<Record<string, string>>;
  /** The runner's credentials as `AWS_*` variables (`runtime-env` only). */
  readonly credentials?: Readonly<Record<string, string>>;
}

/** The part of the AWS SDK's S3Client config read here. */
interface ClientConfig {
  readonly endpoint?: () => Promise<{ protocol: string; hostname: string; port?: number; path?: string }>;
  readonly region: () => Promise<string>;
  readonly forcePathStyle?: boolean;
  readonly credentials: () => Promise<{ accessKeyId: string; secretAccessKey: string; sessionToken?: string }>;
}

/** `s3://bucket/dir` → bucket and dir (no trailing `/`); undefined for anything else. */
export function parseS3Url(url: string): { bucket: string; dir: string } | undefined {
  const m = /^s3:\/\/([^/]+)\/?(.*)$/.exec(url);
  return m ? { bucket: m[1] as string, dir: (m[2] as string).replace(/\/+$/, '') } : undefined;
}

/** The store of `job` as its Ray job sees it; `CAIRN_EXECUTOR` naming the fix when the step's store is not an S3 store. */
export async function farStoreOf(job: JobRequest, credentials: RayStoreCredentials): Promise<FarStore> {
  const step = job.spec.name;
  const store = job.storeAccess?.store as { client?: { config?: ClientConfig }; bucket?: unknown; key?: unknown } | undefined;
  const config = store?.client?.config;
  if (typeof store?.bucket !== 'string' || typeof store.key !== 'string' || config === undefined) {
    throw new CairnError('CAIRN_EXECUTOR', `Step "${step}": the Ray executor has sharedFs: false, so its jobs read and write the store over the network, which it does for an S3 store (@cairn/store-s3, an s3:// prefix) only; this step's store is ${job.storeAccess === undefined ? 'on a filesystem' : 'another kind'}. Use an s3:// prefix, or share the store's directory with the Ray nodes and set sharedFs: true.`, { step });
  }
  const e = config.endpoint ? await config.endpoint() : undefined;
  const region = await config.region();
  const where: Record<string, string> = {
    CAIRN_S3_ENDPOINT: e ? `${e.protocol.replace(/:$/, '')}://${e.hostname}${e.port ? `:${e.port}` : ''}` : `https://s3.${region}.amazonaws.com`,
    CAIRN_S3_REGION: region,
    CAIRN_S3_PATH_STYLE: config.forcePathStyle === true ? '1' : '0',
  };
  let creds: Record<string, string> | undefined;
  if (credentials === 'runtime-env') {
    const c = await config.credentials();
    creds = { AWS_ACCESS_KEY_ID: c.accessKeyId, AWS_SECRET_ACCESS_KEY: c.secretAccessKey, ...(c.sessionToken ? { AWS_SESSION_TOKEN: c.sessionToken } : {}) };
  }
  return { bucket: store.bucket, attemptPrefix: store.key, where, ...(creds ? { credentials: creds } : {}) };
}
