/**
 * The slurmrestd transport (`openapi/v0.0.38`, JWT): no shell at all. Requests go through
 * `node:http` with an explicit `Content-Length` (this slurmrestd answers chunked bodies
 * with a response Node cannot parse) and one connection per request, closed by this side
 * once the answer is read (nothing lingers).
 *
 * A submission that gets no answer at all (the connection reset, a timeout) may or may not have
 * created the job: under load this slurmrestd now and then resets a connection it has already
 * read. Submitting again blindly could run the step twice, so the transport first looks for
 * the job by name and output file (unique to the attempt) and submits again only when there
 * is none.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { CairnError } from '@cairn/core';
import { createLimiter } from '@cairn/grid';
import type { SlurmRestOptions } from './options.js';
import { restJob, type SubmitSpec } from './sbatch.js';
import { normalizeState, slurmInfo } from './states.js';
import type { SlurmJobInfo, SlurmStats, SlurmTransport } from './transport.js';

const API = '/slurm/v0.0.38';

/** Submissions tried before giving up when none gets an answer (each after looking for the job). */
const SUBMIT_TRIES = 3;
/** Wait before looking for a job whose submission got no answer (the server may still be creating it). */
const SETTLE_MS = 500;

/** Errors of requests sent without an HTTP answer (reset, timed out): the server may or may not have acted. */
const unanswered = new WeakSet<object>();

/** Socket errors raised before a request could reach the server: it certainly did nothing. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL']);

interface RestError {
  error?: string;
  description?: string;
  error_number?: number;
  error_code?: number;
}

interface RestReply {
  errors?: RestError[];
  job_id?: number;
  jobs?: {
    job_id?: number;
    job_state?: string;
    state_reason?: string;
    exit_code?: number;
    array_job_id?: number;
    array_task_id?: number | null;
    name?: string;
    standard_output?: string;
  }[];
}

function errorText(errors: readonly RestError[]): string {
  return errors.map((e) => [e.error, e.description].filter(Boolean).join(': ')).join('; ');
}

/** A raw wait status (`exit_code`) as an exit code. */
function exitOf(status: number | undefined): number | undefined {
  if (typeof status !== 'number') return undefined;
  return (status & 0x7f) === 0 ? status >> 8 : 128 + (status & 0x7f);
}

/** The default environment of submitted jobs. */
function defaultEnvironment(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const k of ['PATH', 'HOME', 'LANG', 'USER']) {
    const v = process.env[k];
    if (v !== undefined) env[k] = v;
  }
  if (env.PATH === undefined) env.PATH = '/usr/local/bin:/usr/bin:/bin';
  return env;
}

/** Creates the REST transport. */
export function restTransport(rest: SlurmRestOptions, stats: SlurmStats, extraJobFields: Readonly<Record<string, unknown>> = {}): SlurmTransport {
  const base = new URL(rest.url);
  const environment = rest.jobEnvironment ?? defaultEnvironment();
  const maxInFlight = rest.maxInFlight ?? 8;
  if (!Number.isInteger(maxInFlight) || maxInFlight < 1) {
    throw new CairnError('CAIRN_CONFIG', `Slurm REST: maxInFlight must be a positive integer (got ${String(rest.maxInFlight)}).`);
  }
  const limit = createLimiter(maxInFlight);

  /** One request, at most `maxInFlight` at a time. */
  const call = (method: 'GET' | 'POST' | 'DELETE', path: string, what: string, body?: unknown): Promise<{ status: number; reply: RestReply }> => limit(() => send(method, path, what, body));

  const send = async (method: 'GET' | 'POST' | 'DELETE', path: string, what: string, body?: unknown): Promise<{ status: number; reply: RestReply }> => {
    stats.restCalls++;
    const token = typeof rest.token === 'function' ? await rest.token() : rest.token;
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const url = new URL(`${base.pathname.replace(/\/$/, '')}${path}`, base);
    const headers: Record<string, string> = {
      Accept: 'application/json',
      'X-SLURM-USER-NAME': rest.user,
      'X-SLURM-USER-TOKEN': token,
      // Not `close`: this slurmrestd then appends a stray "Connection: Close" line after the body.
      Connection: 'keep-alive',
      'Content-Length': String(payload?.length ?? 0),
    };
    if (payload) headers['Content-Type'] = 'application/json';
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const where = `${method} ${url.href}`;
    return new Promise((resolve, reject) => {
      const req = request(url, { method, headers, agent: false, timeout: rest.timeoutMs ?? 30_000 }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (cause) => reject(new CairnError('CAIRN_REMOTE', `${what} failed: ${where}: ${cause.message}`, { cause, retryable: true })));
        res.on('end', () => {
          res.socket?.destroy();
          const text = Buffer.concat(chunks).toString('utf8');
          let reply: RestReply;
          try {
            reply = text ? (JSON.parse(text) as RestReply) : {};
          } catch (cause) {
            reject(new CairnError('CAIRN_REMOTE', `${what} failed: ${where} answered ${res.statusCode} with non-JSON: ${text.slice(0, 300)}`, { cause, retryable: true }));
            return;
          }
          resolve({ status: res.statusCode ?? 0, reply });
        });
      });
      req.on('timeout', () => req.destroy(new Error(`no answer within ${rest.timeoutMs ?? 30_000} ms`)));
      req.on('error', (cause) => {
        const err = new CairnError('CAIRN_REMOTE', `${what} failed: ${where}: ${cause.message}. Check that slurmrestd runs there (openapi/v0.0.38, rest_auth/jwt).`, {
          cause,
          retryable: true,
        });
        if (!NOT_SENT.has((cause as NodeJS.ErrnoException).code ?? '')) unanswered.add(err);
        reject(err);
      });
      req.end(payload);
    });
  };

  const fail = (what: string, method: string, path: string, status: number, reply: RestReply): CairnError => {
    const auth = status === 401 || status === 403 ? ' Check the user name and that the JWT (scontrol token) has not expired.' : '';
    return new CairnError('CAIRN_REMOTE', `${what} failed: ${method} ${API}${path.replace(API, '')} answered ${status}: ${errorText(reply.errors ?? []) || '(no error text)'}.${auth}`, {
      retryable: status >= 500 || status === 0,
    });
  };

  /** Every job slurmctld still knows (`what`: the purpose, for errors). */
  const listJobs = async (what: string): Promise<NonNullable<RestReply['jobs']>> => {
    const path = `${API}/jobs`;
    const { status, reply } = await call('GET', path, what);
    if (status !== 200 || !Array.isArray(reply.jobs)) throw fail(what, 'GET', path, status, reply);
    return reply.jobs;
  };

  /** The id of the job `spec` describes, if one exists: same name and output file (Slurm may show `%j` expanded). */
  const findSubmitted = async (spec: SubmitSpec): Promise<string | undefined> => {
    for (const j of await listJobs('Looking for a Slurm job whose submission got no answer')) {
      if (j.name !== spec.name || typeof j.job_id !== 'number') continue;
      const out = j.standard_output;
      // A task of an array stands for the array.
      if (out === spec.slurmOutput || out === spec.slurmOutput.replaceAll('%j', String(j.job_id))) return String(j.array_job_id || j.job_id);
    }
    return undefined;
  };

  return {
    kind: 'rest',
    async submit(spec: SubmitSpec) {
      const path = `${API}/job/submit`;
      const body = { script: spec.script, job: restJob(spec, environment, extraJobFields) };
      for (let attempt = 1; ; attempt++) {
        let answer: { status: number; reply: RestReply };
        try {
          answer = await call('POST', path, 'Submitting a Slurm job', body);
        } catch (err) {
          if (!unanswered.has(err as object) || attempt >= SUBMIT_TRIES) throw err;
          await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
          // If even the lookup fails, the submission's own error is the one to report.
          const found = await findSubmitted(spec).catch(() => {
            throw err;
          });
          if (found !== undefined) return found;
          continue;
        }
        const { status, reply } = answer;
        if (status !== 200 || (reply.errors?.length ?? 0) > 0 || typeof reply.job_id !== 'number') throw fail('Submitting a Slurm job', 'POST', path, status, reply);
        return String(reply.job_id);
      }
    },
    async query(ids) {
      const out = new Map<string, SlurmJobInfo>();
      if (ids.length === 0) return out;
      const wanted = new Set(ids);
      for (const j of await listJobs('Checking Slurm jobs')) {
        const id = j.array_task_id !== null && j.array_task_id !== undefined && j.array_job_id ? `${j.array_job_id}_${j.array_task_id}` : String(j.job_id);
        if (wanted.has(id) && typeof j.job_state === 'string') out.set(id, slurmInfo(normalizeState(j.job_state), j.state_reason, exitOf(j.exit_code)));
      }
      return out;
    },
    async finished() {
      // slurmrestd v0.0.38 without slurmdbd has no accounting: a purged job is simply gone.
      return new Map();
    },
    async cancel(ids) {
      // v0.0.38 has no batch cancel: one DELETE per job, sent concurrently.
      await Promise.all(
        ids.map(async (id) => {
          const path = `${API}/job/${encodeURIComponent(id)}`;
          const { status, reply } = await call('DELETE', path, 'Cancelling a Slurm job');
          const gone = (reply.errors ?? []).every((e) => /Invalid job id|already completed/i.test(`${e.error ?? ''} ${e.description ?? ''}`));
          if ((status !== 200 || (reply.errors?.length ?? 0) > 0) && !gone) throw fail('Cancelling a Slurm job', 'DELETE', path, status, reply);
        }),
      );
    },
  };
}
