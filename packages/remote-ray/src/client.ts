/**
 * Ray's Jobs REST API (the dashboard's HTTP endpoints), over Node's HTTP client (http.ts says why
 * not `fetch`): submit, one list for
 * every job, one job, its logs, stop, and the cluster's nodes (for the resources check). Every
 * request is counted (`requests`), so tests and the benchmark can say how many a step costs.
 * TLS is verified by Node as for any `https://` address.
 */
import { CairnError } from '@cairn/core';
import { send, type HttpResponse } from './http.js';

/** Ray's job states, as the Jobs API spells them. */
export type RayJobStatus =
  /** Accepted; waiting for resources or for its runtime environment to be set up. */
  | 'PENDING'
  /** The entrypoint runs. */
  | 'RUNNING'
  /** Stopped by a stop request (`ray job stop`, or Cairn's cancel). */
  | 'STOPPED'
  /** The entrypoint exited 0. */
  | 'SUCCEEDED'
  /** The entrypoint exited non-zero, or Ray could not run it (see `error_type`). */
  | 'FAILED';

/** One job, as `GET /api/jobs/` and `GET /api/jobs/{id}` return it (the fields Cairn reads). */
export interface RayJobInfo {
  /** The submission id Cairn chose. */
  readonly submission_id: string;
  /** The state. */
  readonly status: RayJobStatus;
  /** Ray's explanation (with the last lines of the logs for a failed entrypoint). */
  readonly message?: string | null;
  /** Why a FAILED job failed: `JOB_ENTRYPOINT_COMMAND_ERROR` (the program's own failure) or an infrastructure cause. */
  readonly error_type?: string | null;
  /** The entrypoint's exit code, once it ended. */
  readonly driver_exit_code?: number | null;
  /** Metadata given at submission (Cairn's: `cairn.step`, `cairn.job`, `cairn.path`, `cairn.output`, `cairn.runner`). */
  readonly metadata?: Readonly<Record<string, string>> | null;
  /** The entrypoint command. */
  readonly entrypoint?: string;
}

/** The body of `POST /api/jobs/`. */
export interface RaySubmitBody {
  /** The shell command the job runs. */
  readonly entrypoint: string;
  /** The job's id (Cairn derives it from the step's identity and attempt). */
  readonly submission_id: string;
  /** CPUs reserved for the entrypoint. */
  readonly entrypoint_num_cpus?: number;
  /** GPUs reserved for the entrypoint (Ray sets CUDA_VISIBLE_DEVICES). */
  readonly entrypoint_num_gpus?: number;
  /** Memory reserved for the entrypoint, in bytes. */
  readonly entrypoint_memory?: number;
  /** Custom resources reserved for the entrypoint. */
  readonly entrypoint_resources?: Readonly<Record<string, number>>;
  /** Ray's runtime environment (`working_dir`, `env_vars`, `pip`). */
  readonly runtime_env?: Readonly<Record<string, unknown>>;
  /** Free-form string metadata. */
  readonly metadata?: Readonly<Record<string, string>>;
}

/** One node, as the state API (`GET /api/v0/nodes`) returns it. */
export interface RayNodeInfo {
  /** `ALIVE` or `DEAD`. */
  readonly state: string;
  /** Its resources (`CPU`, `GPU`, `memory`, custom names). */
  readonly resources_total: Readonly<Record<string, number>>;
}

/** How to reach a dashboard. */
export interface JobsClientOptions {
  /** The dashboard's base URL (`http://head:8265`). */
  readonly address: string;
  /** Headers sent with every request (authentication included). */
  readonly headers: Readonly<Record<string, string>>;
  /** Per-request timeout in ms. */
  readonly timeoutMs: number;
}

/** The Jobs API client. */
export interface JobsClient {
  /** Requests made so far. */
  readonly requests: number;
  /** `GET /api/version`: the Ray version, or a `CAIRN_REMOTE` error naming the address and the fix. */
  version(): Promise<string>;
  /** `POST /api/jobs/`. Resolves `'exists'` when a job with that submission id already exists. */
  submit(body: RaySubmitBody): Promise<'submitted' | 'exists'>;
  /** `GET /api/jobs/`: every job the cluster knows, by submission id. */
  list(): Promise<Map<string, RayJobInfo>>;
  /** `GET /api/jobs/{id}`; null when the cluster does not know it. */
  get(id: string): Promise<RayJobInfo | null>;
  /** `POST /api/jobs/{id}/stop`. False when the job had already ended. */
  stop(id: string): Promise<boolean>;
  /** `GET /api/jobs/{id}/logs`: everything the job printed so far. */
  logs(id: string): Promise<string>;
  /** `GET /api/v0/nodes`: the alive nodes and their resources. */
  nodes(): Promise<RayNodeInfo[]>;
  /**
   * `GET /api/packages/gcs/{name}`: whether the cluster holds the working_dir package `name`
   * (`_ray_pkg_<hash>.zip`). Ray pins it for a while (10 min by default) so it is not collected
   * before a job that names it is submitted: the `ray job submit` CLI's own order.
   */
  hasPackage(name: string): Promise<boolean>;
  /** `PUT /api/packages/gcs/{name}`: uploads a working_dir package (a zip) to the cluster's GCS. */
  putPackage(name: string, zip: Buffer): Promise<void>;
}

/** Creates a client; makes no request. */
export function createJobsClient(options: JobsClientOptions): JobsClient {
  const base = options.address.replace(/\/+$/, '');
  let requests = 0;
  const call = async (method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown): Promise<HttpResponse> => {
    requests++;
    try {
      return await send(method, `${base}${path}`, options.headers, body === undefined ? undefined : Buffer.isBuffer(body) ? body : JSON.stringify(body), options.timeoutMs);
    } catch (cause) {
      const why = (cause as NodeJS.ErrnoException).code ?? (cause as Error).message;
      throw new CairnError('CAIRN_REMOTE', `The Ray dashboard at ${base} did not answer ${method} ${path} (${why}). Check the address (option "address" or RAY_API_SERVER_ADDRESS: the dashboard's HTTP port, 8265 by default) and that the cluster's head node is up.`, { cause, retryable: true });
    }
  };
  const fail = (res: HttpResponse, what: string): never => {
    const auth = res.status === 401 || res.status === 403 ? ' The dashboard refused the credentials: set the option "token" (or RAY_AUTH_TOKEN) or "headers".' : '';
    throw new CairnError('CAIRN_REMOTE', `Ray's Jobs API at ${base} refused to ${what}: HTTP ${res.status} ${lastLine(res.text)}.${auth}`, { retryable: res.status >= 500 });
  };
  const ok = (res: HttpResponse) => res.status >= 200 && res.status < 300;
  const json = <T>(res: HttpResponse, what: string): T => (ok(res) ? (JSON.parse(res.text) as T) : fail(res, what));

  return {
    get requests() {
      return requests;
    },
    async version() {
      const res = await call('GET', '/api/version');
      const body = await json<{ ray_version?: string }>(res, 'tell its version');
      return body.ray_version ?? 'unknown';
    },
    async submit(body) {
      const res = await call('POST', '/api/jobs/', body);
      if (ok(res)) return 'submitted';
      if (/already exists/i.test(res.text)) return 'exists';
      return fail(res, `submit job ${body.submission_id}`);
    },
    async list() {
      const jobs = await json<RayJobInfo[]>(await call('GET', '/api/jobs/'), 'list its jobs');
      const out = new Map<string, RayJobInfo>();
      for (const j of jobs) if (j.submission_id) out.set(j.submission_id, j);
      return out;
    },
    async get(id) {
      const res = await call('GET', `/api/jobs/${encodeURIComponent(id)}`);
      if (res.status === 404) return null;
      return json<RayJobInfo>(res, `describe job ${id}`);
    },
    async stop(id) {
      const body = await json<{ stopped?: boolean }>(await call('POST', `/api/jobs/${encodeURIComponent(id)}/stop`), `stop job ${id}`);
      return body.stopped === true;
    },
    async logs(id) {
      const body = await json<{ logs?: string }>(await call('GET', `/api/jobs/${encodeURIComponent(id)}/logs`), `return the logs of job ${id}`);
      return body.logs ?? '';
    },
    async hasPackage(name) {
      const res = await call('GET', `/api/packages/gcs/${encodeURIComponent(name)}`);
      if (res.status === 404) return false;
      if (!ok(res)) fail(res, `tell whether it holds the package ${name}`);
      return true;
    },
    async putPackage(name, zip) {
      const res = await call('PUT', `/api/packages/gcs/${encodeURIComponent(name)}`, zip);
      if (!ok(res)) fail(res, `store the package ${name}`);
    },
    async nodes() {
      const body = await json<{ data?: { result?: { result?: RayNodeInfo[] } } }>(await call('GET', '/api/v0/nodes?limit=10000'), 'list its nodes');
      return (body.data?.result?.result ?? []).filter((n) => n.state === 'ALIVE');
    },
  };
}

/** The last non-empty line of a (Python traceback) response body, where the reason is. */
function lastLine(text: string): string {
  const lines = text.split('\n').map((l) => l.trim()).filter(Boolean);
  return (lines.at(-1) ?? '').slice(0, 300);
}
