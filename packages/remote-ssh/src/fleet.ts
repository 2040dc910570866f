/**
 * One SSH executor's shared state: its hosts, its jobs and their queue, the code it bundles and
 * uploads, and the three calls every part makes: `end` a job (frees its slots, reports its last
 * status, places waiting jobs), `report` a status (held until the handle is handed out), and
 * `pump` (place queued jobs). The parts are modules of functions of a Fleet, each one idea:
 *
 *   hosts.ts        each host's connection, readiness, loss and return (its orphans)
 *   admission.ts    placing queued jobs on hosts
 *   launch.ts       starting a placed job: detached, or in the host's persistent worker
 *   host-worker.ts  the persistent worker's channel and what comes back on it
 *   status.ts       the tick, the batched status check, `poll`
 *   finish.ts       collecting an ended job: exit code, logs, result, outputs
 *   cancel.ts       stopping jobs (process groups, or through their worker)
 *   logs.ts, adopt.ts
 *
 * executor.ts is the Executor contract on top of them.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { CairnError } from '@cairn/core';
import type { ExecutorHost, JobHandle, JobStatus } from '@cairn/runner/executor';
import { pump } from './admission.js';
import { Bundler, CodeUploader } from './deploy.js';
import { openHost } from './hosts.js';
import type { SshExecutorOptions } from './options.js';
import type { Demand } from './placement.js';
import type { Fleet as FleetModel, FleetOptions, HostState, Job, SshJobInfo } from './model.js';
import { checkWorkerMode, type WorkerMode } from './worker-policy.js';


function defaultWorkerEntry(): string {
  const pkg = createRequire(import.meta.url).resolve('@cairn/runner/package.json');
  return join(dirname(pkg), 'dist', 'worker-entry.js');
}

export class Fleet implements FleetModel {
  readonly name: string;
  readonly opts: FleetOptions;
  readonly hosts: HostState[];
  readonly bundler = new Bundler(() => import('esbuild'));
  readonly uploader = new CodeUploader();
  /** Every job not yet ended, by job id. */
  readonly jobs = new Map<string, Job>();
  /** Jobs waiting for a host, in submission order. */
  readonly queue: Job[] = [];
  /** Re-runs placement when every host is down, so queued jobs fail instead of waiting forever. */
  downTimer: NodeJS.Timeout | undefined;
  readonly workerEntry: string;
  readonly workerMode: WorkerMode;
  readonly workerIdleMs: number;
  /** The runner, once `start` was called. */
  host: ExecutorHost | undefined;
  /** Control commands under way (cancels: see control.ts); `stop()` waits for them. */
  readonly control = new Set<Promise<void>>();
  /** Set by `stop()`: cancels stop waiting for their jobs to end. */
  stopped = false;

  constructor(options: SshExecutorOptions) {
    if (!options || !Array.isArray(options.hosts) || options.hosts.length === 0) {
      throw new CairnError('CAIRN_CONFIG', 'createSshExecutor: `hosts` must list at least one host ({ name, host, user, privateKeyPath, capacity }).');
    }
    this.name = options.name ?? 'ssh';
    this.opts = {
      hostKeyVerification: options.hostKeyVerification ?? true,
      sharedFs: options.sharedFs ?? false,
      pollIntervalMs: options.pollIntervalMs ?? 1000,
      hostTimeoutMs: options.hostTimeoutMs ?? 30_000,
      cancelGraceMs: options.cancelGraceMs ?? 5000,
      orphanGraceMs: options.orphanGraceMs ?? 600_000,
      maxChannels: options.maxChannels ?? 8,
    };
    this.workerEntry = options.workerEntry ?? defaultWorkerEntry();
    this.workerMode = checkWorkerMode(options.worker);
    this.workerIdleMs = options.workerIdleMs ?? 60_000;
    // The heartbeat is touched once per poll interval: a grace of fewer than three would stop jobs that are tracked.
    const minGrace = Math.max(2000, 3 * this.opts.pollIntervalMs);
    if (!Number.isFinite(this.opts.orphanGraceMs) || this.opts.orphanGraceMs < minGrace) {
      throw new CairnError('CAIRN_CONFIG', `createSshExecutor: \`orphanGraceMs\` must be at least ${minGrace} ms (2000, and three poll intervals; got ${JSON.stringify(options.orphanGraceMs)}). Keep it above hostTimeoutMs and the time a restarted runner takes to adopt its jobs.`);
    }
    if (!Number.isFinite(this.workerIdleMs) || this.workerIdleMs <= 0) {
      throw new CairnError('CAIRN_CONFIG', `createSshExecutor: \`workerIdleMs\` must be a positive number of milliseconds (got ${JSON.stringify(options.workerIdleMs)}).`);
    }
    const names = new Set<string>();
    this.hosts = options.hosts.map((h) => {
      if (!h.name || names.has(h.name)) throw new CairnError('CAIRN_CONFIG', `createSshExecutor: every host needs a unique name (got ${JSON.stringify(h.name)}).`);
      names.add(h.name);
      if (!h.host || !h.user) throw new CairnError('CAIRN_CONFIG', `SSH host "${h.name}": \`host\` and \`user\` are required.`);
      if (h.privateKey === undefined && h.privateKeyPath === undefined && !h.agent) {
        throw new CairnError('CAIRN_CONFIG', `SSH host "${h.name}": give one of privateKey, privateKeyPath or agent.`);
      }
      return openHost(h, this.opts);
    });
  }

  get logger(): ExecutorHost['logger'] {
    return this.host?.logger ?? { info: () => {}, warn: (m) => process.emitWarning(m), error: (m) => process.emitWarning(m) };
  }

  /** Places queued jobs that fit (admission.ts). Returns the launches started. */
  pump(): Map<Job, Promise<void>> {
    return pump(this);
  }

  /** A job's record, submitted (`queued`) or adopted (`running`): no link, nothing tried, nothing pending yet. */
  newJob(id: string, info: SshJobInfo, demand: Demand, start: Pick<Job, 'phase' | 'host' | 'request' | 'stepBundle' | 'runsIn'>): Job {
    return {
      id,
      handle: { jobId: id, executor: this.name, info: info as unknown as Record<string, unknown> },
      info,
      demand,
      ...start,
      triedHosts: new Set(),
      cancelRequested: false,
      handedOut: false,
      pending: [],
      link: undefined,
      onEnd: [],
      logs: { stdout: 0, stderr: 0, writing: Promise.resolve() },
      killing: undefined,
      runningSince: start.phase === 'running' ? Date.now() : 0,
    };
  }

  /** Ends a job: frees its slots, reports its terminal status, places waiting jobs. */
  end(j: Job, status: JobStatus): void {
    if (j.phase === 'done') return;
    const wasPlaced = j.phase !== 'queued';
    j.phase = 'done';
    if (wasPlaced && j.host) j.host.slots.release(j.demand, j.info.gpuIndices);
    const qi = this.queue.indexOf(j);
    if (qi >= 0) this.queue.splice(qi, 1);
    this.jobs.delete(j.id);
    for (const f of j.onEnd.splice(0)) f();
    this.report(j, status);
    if (this.queue.length > 0) this.pump();
  }

  report(j: Job, status: JobStatus): void {
    j.pending.push(status);
    if (j.handedOut) this.flush(j);
  }

  flush(j: Job): void {
    for (const s of j.pending.splice(0)) this.host?.report(j.id, s);
  }

  hostOf(hd: JobHandle): HostState | undefined {
    const name = (hd.info as Partial<SshJobInfo>).host;
    return this.hosts.find((h) => h.options.name === name);
  }
}
