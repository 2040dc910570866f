/**
 * The Ray executor: each step attempt is a Ray job submitted through the Jobs REST API. ONE list
 * request per interval reports every active job of the run; the submission id comes from the
 * step's identity and attempt (submission-id.ts); a restarted runner adopts the jobs the previous
 * one recorded (`resumable`); cancel is Ray's stop; logs are the attempt's log files (shared
 * filesystem) or Ray's job logs.
 */
import { rmSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { CairnError } from '@cairn/core';
import { createJobsClient, type JobsClient, type RayJobInfo, type RayNodeInfo } from './client.js';
import { buildEntrypoint } from './entrypoint.js';
import { rayLogs } from './logs.js';
import { trackedFrom, type Tracked } from './tracked.js';
import { checkHints, resolveOptions, type RayExecutorOptions } from './options.js';
import { entrypointResources, unplaceable } from './resources.js';
import { runtimeEnvOf, withDelivered } from './runtime-env.js';
import { classify } from './states.js';
import { statusOf, type JobFacts } from './status.js';
import { collectFromLogs, withoutResultLine } from './ray-log-result.js';
import { zipStored, type ZipEntry } from './zip.js';
import { createPoller } from './poller.js';
import { Bundler } from './runner-api.js';
import { generation, generationsOf, submissionId } from './submission-id.js';
import { SECRETS_FILE, tailLogs, type Executor, type ExecutorCapabilities, type ExecutorFactory, type ExecutorHost, type JobHandle, type JobRequest, type JobState, type JobStatus } from './runner-api.js';

/** Counters of the executor's work, for tests and the benchmark. */
export interface RayStats {
  /** HTTP requests to the dashboard. */
  readonly requests: number;
  /** Jobs submitted. */
  readonly submissions: number;
  /** Status checks (each ONE list request for every active job). */
  readonly statusQueries: number;
  /** Stop requests. */
  readonly stops: number;
  /** working_dir packages uploaded (a job without the shared filesystem; once per content). */
  readonly packageUploads: number;
}

/** The Ray executor, with its counters and Jobs API client. */
export interface RayExecutor extends Executor {
  /** What it did so far. */
  readonly stats: RayStats;
  /** The Jobs API client (its `requests` counter included). */
  readonly client: JobsClient;
}

const TERMINAL = new Set<JobState>(['succeeded', 'failed', 'cancelled', 'lost']);
const LIVE = new Set(['PENDING', 'RUNNING']);
/** The variable that tells a job its Ray submission id. */
export const SUBMISSION_ID_ENV = 'CAIRN_RAY_SUBMISSION_ID';
/** How long the cluster's nodes are trusted for the resources check. */
const NODES_TTL_MS = 30_000;
/** Status checks in a row a job may be missing from the list before it counts as lost. */
const MISSING_LIMIT = 3;

/** What status.ts needs of a watched job and Ray's answer about it. */
function factsOf(t: Tracked, info: RayJobInfo): JobFacts {
  // Ray's one log (stdout and stderr interleaved) is the stdout log of a job off the shared filesystem.
  const logPaths = t.resultFromLogs && t.logPaths ? { stdout: t.logPaths.stdout, stderr: t.logPaths.stdout } : t.logPaths;
  return { step: t.step, id: t.id, resultPath: t.resultPath, stderr: logPaths?.stderr, logPaths, program: t.program, message: info.message, secrets: t.secrets };
}
/** How long a package the cluster was seen to hold is trusted without asking again (Ray pins it for 10 minutes). */
const PACKAGE_TTL_MS = 5 * 60_000;

/** Creates a Ray executor; it contacts the cluster at `start` (an unreachable dashboard fails there, before any submission). */
export function createRayExecutor(options: RayExecutorOptions = {}): RayExecutor {
  const o = resolveOptions(options);
  const name = o.name;
  const client = createJobsClient({ address: o.address, headers: o.headers, timeoutMs: o.requestTimeoutMs });
  const stats = { submissions: 0, statusQueries: 0, stops: 0, packageUploads: 0 };
  /** working_dir packages the cluster holds, by name: when this executor last saw (or put) each. */
  const packages = new Map<string, number>();
  /** The code of worker steps off the shared filesystem (esbuild is loaded on first use). */
  const bundler = new Bundler(() => import('esbuild'));
  const capabilities: ExecutorCapabilities = {
    remote: true,
    sharedFs: o.sharedFs,
    deploysCode: false,
    inProcess: false,
    cancel: 'reliable',
    logs: true,
    resumable: true,
    // Only opted in: the dashboard shows a job's entrypoint and runtime_env (secrets.ts).
    secrets: o.secrets === 'shared-file',
    ...(o.maxConcurrency !== undefined ? { maxConcurrency: o.maxConcurrency } : {}),
  };
  let host: ExecutorHost | undefined;
  const active = new Map<string, Tracked>();
  let nodes: { at: number; list: Promise<RayNodeInfo[]> } | undefined;
  /** One list request shared by lookups made together (adoption of many steps). */
  let sharedList: Promise<Map<string, RayJobInfo>> | undefined;

  const needHost = (): ExecutorHost => {
    if (!host) throw new CairnError('CAIRN_EXECUTOR', `The "${name}" executor was used before start(host).`);
    return host;
  };

  const listOnce = (): Promise<Map<string, RayJobInfo>> => {
    if (sharedList) return sharedList;
    stats.statusQueries++;
    const p = client.list();
    sharedList = p;
    const clear = () => {
      if (sharedList === p) sharedList = undefined;
    };
    p.then(clear, clear);
    return p;
  };

  /** One status check of every active job: ONE list request. */
  async function check(): Promise<void> {
    if (active.size === 0) return;
    const jobs = await listOnce();
    for (const job of [...active.values()]) {
      const info = jobs.get(job.id);
      let status: JobStatus;
      if (info === undefined) {
        if (++job.missing < MISSING_LIMIT) continue;
        status = { state: 'lost', reason: `Ray no longer lists job ${job.id}`, infrastructure: true };
      } else {
        job.missing = 0;
        status = await judge(job, info);
      }
      if (status.state === job.lastState || !active.has(job.handle.jobId)) continue;
      job.lastState = status.state;
      if (TERMINAL.has(status.state)) {
        active.delete(job.handle.jobId);
        // A step stopped before it started left its secrets file behind.
        if (job.resultPath !== undefined) rmSync(join(dirname(job.resultPath), SECRETS_FILE), { force: true });
      }
      host?.report(job.handle.jobId, status);
    }
  }

  /** The status of `t` from Ray's answer; a job off the shared filesystem that ended has its log and result read first. */
  async function judge(t: Tracked, info: RayJobInfo): Promise<JobStatus> {
    const verdict = classify(info, t.cancelRequested);
    if (verdict.kind === 'ended' && t.resultFromLogs && t.logPaths && t.resultPath) await collectFromLogs(client, t.id, t.logPaths.stdout, t.resultPath);
    return statusOf(verdict, factsOf(t, info));
  }

  /** Makes sure the cluster holds the package `name` (one GET, which also pins it; a PUT when missing); its URI. */
  async function deliver(name: string, files: readonly ZipEntry[]): Promise<string> {
    const seen = packages.get(name);
    if (seen === undefined || Date.now() - seen > PACKAGE_TTL_MS) {
      if (!(await client.hasPackage(name))) {
        stats.packageUploads++;
        await client.putPackage(name, zipStored(files));
      }
      packages.set(name, Date.now());
    }
    return `gcs://${name}`;
  }

  const poller = createPoller(
    {
      check,
      idle: () => active.size === 0,
      failing: (err) => host?.logger.warn(`${name}: status check failed, retrying with backoff: ${(err as Error).message}`),
      recovered: () => host?.logger.info(`${name}: status checks work again`),
    },
    o.pollIntervalMs,
  );

  const watch = (t: Tracked): void => {
    active.set(t.handle.jobId, t);
    poller.kick();
  };

  const clusterNodes = (): Promise<RayNodeInfo[]> => {
    if (!nodes || Date.now() - nodes.at > NODES_TTL_MS) {
      const list = client.nodes();
      nodes = { at: Date.now(), list };
      list.catch(() => (nodes = undefined));
    }
    return nodes.list;
  };

  /**
   * The id to submit `base` under, when Ray already has a job under it (its newest generation):
   * - live, writing to this attempt's output: this very job (adopted, not submitted again);
   * - live, for this step's path but writing elsewhere: submitted by a runner that died before
   *   recording it (this runner holds the step's lease now, so nobody will commit that output): it
   *   is stopped, and the attempt goes under the next generation;
   * - live for another step path (the same step in another store), or ended (an earlier run of
   *   the same attempt number): left alone; the next generation.
   */
  async function resolveExisting(base: string, job: JobRequest): Promise<{ adopt: string } | { next: string }> {
    // A fresh list: one already in flight may predate the job Ray just said exists.
    stats.statusQueries++;
    const all = await client.list();
    const gens = generationsOf(base, all.keys());
    const live = gens.filter((g) => LIVE.has(all.get(g.id)?.status ?? ''));
    const same = live.find((g) => all.get(g.id)?.metadata?.['cairn.output'] === job.outputPath);
    if (same) return { adopt: same.id };
    for (const g of live) {
      if (all.get(g.id)?.metadata?.['cairn.path'] !== job.finalPath) continue;
      needHost().logger.warn(`${name}: step ${job.spec.name}: Ray job ${g.id} was submitted by a runner that died before recording it; stopping it and submitting the attempt again.`);
      stats.stops++;
      await client.stop(g.id);
    }
    return { next: generation(base, (gens[0]?.n ?? 1) + 1) };
  }


  const executor: RayExecutor = {
    name,
    capabilities,
    stats: {
      get requests() {
        return client.requests;
      },
      get submissions() {
        return stats.submissions;
      },
      get statusQueries() {
        return stats.statusQueries;
      },
      get stops() {
        return stats.stops;
      },
      get packageUploads() {
        return stats.packageUploads;
      },
    },
    client,

    async start(h) {
      host = h;
      poller.resume();
      // An unreachable dashboard fails here, once, before any submission (CAIRN_REMOTE: the address and the fix).
      await client.version();
    },

    async submit(job) {
      needHost();
      const step = job.spec.name;
      const hints = checkHints(job.resources.hints?.ray, step);
      const resources = entrypointResources(job.resources, hints);
      if (resources.entrypoint_num_gpus || resources.entrypoint_resources || resources.entrypoint_memory || (resources.entrypoint_num_cpus ?? 0) > 1) {
        const refused = unplaceable(resources, await clusterNodes(), step, o.address);
        if (refused) throw refused;
      }
      const given = runtimeEnvOf(o.runtimeEnv, hints.runtimeEnv);
      if (!o.sharedFs && given?.working_dir !== undefined) {
        throw new CairnError('CAIRN_CONFIG', `Step "${step}": runtimeEnv.workingDir (${String(given.working_dir)}) cannot be used without a shared filesystem: the job's working_dir is the package Cairn delivers its sources in. Declare the files the program needs as its sources instead.`, { step });
      }
      const entry = await buildEntrypoint(job, { nodePath: o.nodePath, workerEntry: o.workerEntry, sharedFs: o.sharedFs, storeCredentials: o.storeCredentials, nodeTempDir: o.nodeTempDir, deliver, bundler });
      const runtimeEnv = withDelivered(given, entry.workingDir, entry.envVars);
      const base = submissionId(o.submissionPrefix, job.jobKey);
      const metadata = { 'cairn.step': step, 'cairn.job': job.jobKey, 'cairn.path': job.finalPath, 'cairn.output': job.outputPath, 'cairn.runner': hostname() };
      const body = { entrypoint: entry.command, ...resources, metadata };
      // The job learns its own submission id from CAIRN_RAY_SUBMISSION_ID.
      const envOf = (id: string) => ({ ...runtimeEnv, env_vars: { ...(runtimeEnv?.env_vars as Record<string, string> | undefined), [SUBMISSION_ID_ENV]: id } });
      let id = base;
      for (let tries = 0; ; tries++) {
        stats.submissions++;
        if ((await client.submit({ ...body, runtime_env: envOf(id), submission_id: id })) === 'submitted') break;
        stats.submissions--;
        const found = await resolveExisting(base, job);
        if ('adopt' in found) {
          id = found.adopt;
          break;
        }
        id = found.next;
        if (tries >= 3) throw new CairnError('CAIRN_REMOTE', `Step "${step}": Ray keeps refusing submission ids ${base}…${id} as taken; is another runner submitting the same step?`, { step });
      }
      const handle: JobHandle = {
        jobId: job.jobKey,
        executor: name,
        info: { submissionId: id, address: o.address, step, resultPath: entry.resultPath, logPaths: job.logPaths, attemptDir: job.attemptDir, ...(entry.program !== undefined ? { program: entry.program } : {}), ...(entry.resultFromLogs === true ? { resultFromLogs: true } : {}) },
      };
      const tracked = trackedFrom(handle, name) as Tracked;
      tracked.secrets = job.secrets;
      // The runner decides when a job is cancelled and calls `cancel` (contract.ts, JobRequest.signal).
      watch(tracked);
      return handle;
    },

    async poll(handles) {
      const out = new Map<string, JobStatus>();
      const jobs = await listOnce();
      for (const h of handles) {
        const t = active.get(h.jobId) ?? trackedFrom(h, name);
        const info = t ? jobs.get(t.id) : undefined;
        if (!t || !info) {
          out.set(h.jobId, { state: 'lost', reason: t ? `Ray does not know job ${t.id}` : `not a ${name} job handle`, infrastructure: true });
          continue;
        }
        out.set(h.jobId, await judge(t, info));
      }
      return out;
    },

    async cancel(handles) {
      // The Jobs API stops one job per request.
      await Promise.all(
        handles.map(async (h) => {
          const t = active.get(h.jobId) ?? trackedFrom(h, name);
          if (!t || t.cancelRequested) return;
          t.cancelRequested = true;
          stats.stops++;
          await client.stop(t.id);
        }),
      );
      poller.kick(0);
    },

    logs(handle, opts) {
      const t = active.get(handle.jobId) ?? trackedFrom(handle, name);
      if (!t) throw new CairnError('CAIRN_EXECUTOR', `Job ${handle.jobId} is not a ${name} job handle (no submissionId in its info).`);
      const isRunning = () => active.has(handle.jobId);
      if (o.sharedFs && t.logPaths) return tailLogs(t.logPaths, { follow: opts.follow, signal: opts.signal, isRunning });
      const lines = rayLogs(client, t.id, opts.follow, isRunning, opts.signal, o.pollIntervalMs);
      return t.resultFromLogs ? withoutResultLine(lines) : lines;
    },

    async adopt(handle) {
      needHost();
      const t = trackedFrom(handle, name);
      if (!t) return null;
      if (active.has(handle.jobId)) return handle;
      const info = (await listOnce()).get(t.id);
      if (!info) return null;
      watch(t);
      return handle;
    },

    async stop() {
      await poller.stop();
      // Jobs keep running on the cluster: a later runner adopts them (or their step's cancel stopped them).
      active.clear();
    },
  };
  return executor;
}

/** The factory the runner's registry and the CLI use: `{ name: 'ray', create(options) }`. */
export const rayExecutorFactory: ExecutorFactory<RayExecutorOptions> = {
  name: 'ray',
  create: (options) => createRayExecutor(options),
};
