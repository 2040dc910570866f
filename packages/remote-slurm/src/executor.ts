/**
 * The Slurm executor: one `sbatch` (or REST submit) per attempt, ONE batched status check
 * per interval for all active jobs, batched `scancel`, and adoption of jobs recorded by an
 * earlier runner. The wrapper script's exit-code file is the truth about how a step ended;
 * Slurm's state says why a job was stopped.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { CairnError, encodeTask, type CairnErrorCode } from '@cairn/core';
import { cliTransport } from './cli.js';
import { localCommandRunner } from './command.js';
import { prepareJobDir } from './job-dir.js';
import { logTail } from './logs.js';
import type { SlurmExecutorOptions } from './options.js';
import { restTransport } from './rest.js';
import {
  decodeResult,
  rebuildError,
  tailLogs,
  workerEntryPath,
  type Executor,
  type ExecutorCapabilities,
  type ExecutorHost,
  type JobHandle,
  type JobRequest,
  type JobState,
  type JobStatus,
} from './runner-api.js';
import { jobName, submitSpec } from './sbatch.js';
import { jobFiles, parseExitFile, wrapperScript, type JobFiles } from './script.js';
import { decide, type Verdict } from './states.js';
import type { SlurmJobInfo, SlurmStats, SlurmTransport } from './transport.js';

/** The Slurm executor, with counters of its calls to Slurm. */
export interface SlurmExecutor extends Executor {
  /** Calls made so far (`squeueCalls`, `restCalls`, `sbatchCalls`…). */
  readonly stats: Readonly<SlurmStats>;
  /** The transport in use. */
  readonly transport: 'cli' | 'rest';
}

/** What a handle's `info` holds (JSON). */
interface SlurmJobInfoRecord {
  readonly slurmJobId: string;
  readonly transport: 'cli' | 'rest';
  readonly dir: string;
  readonly stdout: string;
  readonly stderr: string;
  readonly step: string;
}

interface Tracked {
  readonly handle: JobHandle;
  readonly slurmId: string;
  readonly step: string;
  readonly files: JobFiles;
  readonly logs: { readonly stdout: string; readonly stderr: string };
  lastState: JobState | undefined;
  cancelRequested: boolean;
  /** When the job first needed the grace window (missing exit file / result / Slurm reason). */
  waitingSince: number | undefined;
}

const TERMINAL = new Set<JobState>(['succeeded', 'failed', 'cancelled', 'lost']);

function trackedFrom(handle: JobHandle): Tracked | undefined {
  const i = handle.info as Partial<SlurmJobInfoRecord>;
  if (typeof i.slurmJobId !== 'string' || typeof i.dir !== 'string' || typeof i.stdout !== 'string' || typeof i.stderr !== 'string') return undefined;
  return {
    handle,
    slurmId: i.slurmJobId,
    step: typeof i.step === 'string' ? i.step : handle.jobId,
    files: jobFiles(i.dir),
    logs: { stdout: i.stdout, stderr: i.stderr },
    lastState: undefined,
    cancelRequested: false,
    waitingSince: undefined,
  };
}

async function readExit(files: JobFiles): Promise<{ code: number; signal: string | null } | undefined> {
  const text = await readFile(files.exit, 'utf8').catch(() => undefined);
  return text === undefined ? undefined : parseExitFile(text);
}

/** Creates the Slurm executor. */
export function createSlurmExecutor(options: SlurmExecutorOptions = {}): SlurmExecutor {
  const name = options.name ?? 'slurm';
  const kind = options.transport ?? 'cli';
  const stats: SlurmStats = { sbatchCalls: 0, squeueCalls: 0, sacctCalls: 0, scancelCalls: 0, restCalls: 0 };
  let transport: SlurmTransport;
  if (kind === 'rest') {
    if (!options.rest) throw new CairnError('CAIRN_CONFIG', `createSlurmExecutor: transport 'rest' needs rest: { url, user, token }.`);
    transport = restTransport(options.rest, stats, options.extraJobFields);
  } else {
    transport = cliTransport(options.exec ?? localCommandRunner({ env: options.env ?? {} }), stats, options);
  }
  const initialMs = options.poll?.initialMs ?? 200;
  const maxMs = options.poll?.maxMs ?? 5000;
  const factor = options.poll?.factor ?? 1.5;
  const graceMs = options.exitFileGraceMs ?? 5000;

  const capabilities: ExecutorCapabilities = {
    remote: true,
    sharedFs: options.sharedFs ?? true,
    deploysCode: false,
    inProcess: false,
    cancel: 'reliable',
    logs: true,
    resumable: true,
    ...(options.maxConcurrency !== undefined ? { maxConcurrency: options.maxConcurrency } : {}),
  };

  let host: ExecutorHost | undefined;
  let stopped = false;
  const active = new Map<string, Tracked>();
  let timer: NodeJS.Timeout | undefined;
  let nextAt = Infinity;
  let interval = initialMs;
  let polling = false;
  let again = false;
  let failingSince: number | undefined;

  const schedule = (delay: number): void => {
    if (stopped || active.size === 0) return;
    const at = Date.now() + delay;
    if (timer !== undefined && nextAt <= at) return; // an earlier check is already due
    if (timer !== undefined) clearTimeout(timer);
    nextAt = at;
    timer = setTimeout(() => void tick(), delay);
  };

  /** Something happened (submit, cancel, adopt): check soon. */
  const kick = (): void => {
    interval = initialMs;
    if (polling) again = true;
    else schedule(initialMs);
  };

  async function tick(): Promise<void> {
    timer = undefined;
    nextAt = Infinity;
    if (stopped || polling) return;
    polling = true;
    let changed = false;
    try {
      changed = await checkActive();
      if (failingSince !== undefined) host?.logger.info(`slurm: status checks work again`);
      failingSince = undefined;
    } catch (err) {
      // The controller may be restarting: keep the jobs, back off, say so once.
      if (failingSince === undefined) {
        failingSince = Date.now();
        host?.logger.warn(`slurm: status check failed, retrying with backoff: ${(err as Error).message}`);
      }
    } finally {
      polling = false;
    }
    interval = changed || again ? initialMs : Math.min(maxMs, Math.round(interval * factor));
    again = false;
    schedule(interval);
  }

  /** One batched check of all active jobs; reports changes. True when anything changed. */
  async function checkActive(): Promise<boolean> {
    const jobs = [...active.values()];
    if (jobs.length === 0) return false;
    const statuses = await observe(jobs);
    let changed = false;
    for (const job of jobs) {
      const status = statuses.get(job);
      if (!status || status.state === job.lastState || !active.has(job.handle.jobId)) continue;
      changed = true;
      job.lastState = status.state;
      if (TERMINAL.has(status.state)) active.delete(job.handle.jobId);
      host?.report(job.handle.jobId, status);
    }
    return changed;
  }

  /** Status of each job (`undefined` = no conclusion yet), from one query (plus accounting for vanished jobs). */
  async function observe(jobs: readonly Tracked[]): Promise<Map<Tracked, JobStatus | undefined>> {
    const ids = jobs.map((j) => j.slurmId);
    const queue = await transport.query(ids);
    const missing = ids.filter((id) => !queue.has(id));
    const done = missing.length > 0 ? await transport.finished(missing) : new Map<string, SlurmJobInfo>();
    const now = Date.now();
    const out = new Map<Tracked, JobStatus | undefined>();
    await Promise.all(
      jobs.map(async (job) => {
        const info = queue.get(job.slurmId) ?? done.get(job.slurmId);
        const exit = info?.state === 'PENDING' ? undefined : await readExit(job.files);
        const verdict = decide({
          slurmState: info?.state,
          slurmReason: info?.reason,
          slurmExitCode: info?.exitCode,
          exit,
          begun: info?.state === 'PENDING' ? false : existsSync(job.files.begin),
          cancelRequested: job.cancelRequested,
          graceExpired: job.waitingSince !== undefined && now - job.waitingSince >= graceMs,
        });
        const status = await statusOf(job, verdict, info, now);
        if (status === undefined) job.waitingSince ??= now;
        else job.waitingSince = undefined;
        out.set(job, status);
      }),
    );
    return out;
  }

  async function failure(job: Tracked, code: CairnErrorCode, what: string, extra: { retryable?: boolean } = {}): Promise<Error> {
    const tail = await logTail(job.logs);
    return new CairnError(code, `Step "${job.step}": Slurm job ${job.slurmId} ${what}.${tail ? `\nLast log lines:\n${tail}` : ` Logs: ${job.logs.stderr}`}`, {
      step: job.step,
      retryable: extra.retryable,
    });
  }

  async function statusOf(job: Tracked, v: Verdict, info: SlurmJobInfo | undefined, now: number): Promise<JobStatus | undefined> {
    switch (v.kind) {
      case 'wait':
        return undefined;
      case 'active':
        return { state: v.state };
      case 'ended': {
        const base = { exitCode: v.exitCode ?? null, reason: v.reason };
        if (v.state === 'cancelled') return { state: 'cancelled', ...base };
        if (v.state === 'lost') return { state: 'lost', ...base, infrastructure: true, error: await failure(job, 'CAIRN_REMOTE', `was lost (${v.reason})`, { retryable: true }) };
        const what =
          v.reason === 'TIMEOUT' ? 'exceeded its time limit (TIMEOUT)' : v.reason === 'CANCELLED' ? 'was cancelled outside Cairn (CANCELLED)' : `ended ${v.reason}`;
        const code: CairnErrorCode = v.reason === 'TIMEOUT' ? 'CAIRN_TIMEOUT' : v.reason === 'CANCELLED' ? 'CAIRN_CANCELLED' : 'CAIRN_REMOTE';
        return { state: 'failed', ...base, error: await failure(job, code, v.exitCode === undefined ? what : `${what}, exit code ${v.exitCode}`) };
      }
      case 'result': {
        const bytes = await readFile(job.files.result).catch(() => undefined);
        if (bytes === undefined) {
          const expired = job.waitingSince !== undefined && now - job.waitingSince >= graceMs;
          if (v.code === 0 && !expired) return undefined; // the result may lag the exit file on a shared FS
          if (v.code === 0) return { state: 'lost', exitCode: 0, reason: 'result file missing', infrastructure: true, error: await failure(job, 'CAIRN_REMOTE', 'exited 0 but wrote no result') };
          const killed = info && ['OUT_OF_MEMORY', 'TIMEOUT', 'DEADLINE'].includes(info.state) ? info.state : undefined;
          const reason = killed ?? `exit code ${v.code}`;
          return { state: 'failed', exitCode: v.code, reason, error: await failure(job, 'CAIRN_REMOTE', `failed (${reason})`) };
        }
        let result;
        try {
          result = decodeResult(bytes);
        } catch (err) {
          return { state: 'failed', exitCode: v.code, reason: 'CAIRN_CODEC_CORRUPT', error: err };
        }
        if (result.ok) return { state: 'succeeded', result: result.result, exitCode: v.code };
        if (job.cancelRequested && result.error.code === 'CAIRN_CANCELLED') return { state: 'cancelled', exitCode: v.code, reason: 'CANCELLED' };
        return { state: 'failed', exitCode: v.code, reason: result.error.code ?? result.error.name, error: rebuildError(result.error, job.step) };
      }
    }
  }

  const needHost = (): ExecutorHost => {
    if (!host) throw new CairnError('CAIRN_EXECUTOR', `The "${name}" executor was used before start(host).`);
    return host;
  };

  const executor: SlurmExecutor = {
    name,
    capabilities,
    stats,
    transport: kind,

    async start(h) {
      host = h;
      stopped = false;
    },

    async submit(job: JobRequest): Promise<JobHandle> {
      needHost();
      const files = jobFiles(job.attemptDir);
      const workerEntry = options.workerEntry ?? workerEntryPath();
      const nodePath = options.nodePath ?? process.execPath;
      const workdir = options.workdir ?? process.cwd();
      const resources = job.resources ?? {};
      const name_ = jobName(options.jobNamePrefix ?? 'cairn', job.task.nameWithHash);
      const spec0 = submitSpec(resources, options, { name: name_, scriptPath: files.script, script: '', workdir, slurmOutput: files.slurmOutput });
      const script = wrapperScript({
        title: `Cairn step "${job.spec.name}" (${job.jobKey})`,
        files,
        logs: job.logPaths,
        nodePath,
        workerEntry,
        // The wrapper's own watchdog fires a little after Slurm's `--signal` would, as a backstop (and for REST).
        watchdogSeconds: spec0.timeMinutes !== undefined && spec0.warnSeconds > 0 ? spec0.timeMinutes * 60 - spec0.warnSeconds : 0,
      });
      const spec = { ...spec0, script };
      await prepareJobDir(files.dir, job.spec.name);
      await mkdir(dirname(job.logPaths.stdout), { recursive: true });
      await mkdir(dirname(job.logPaths.stderr), { recursive: true });
      await writeFile(files.task, encodeTask(job.task), { mode: 0o600 });
      await writeFile(files.script, script, { mode: 0o700 });
      let slurmId: string;
      try {
        slurmId = await transport.submit(spec);
      } catch (err) {
        throw new CairnError('CAIRN_REMOTE', `Step "${job.spec.name}": ${(err as Error).message}`, { step: job.spec.name, cause: err, retryable: (err as CairnError).retryable });
      }
      const info: SlurmJobInfoRecord & Record<string, unknown> = { slurmJobId: slurmId, transport: kind, dir: files.dir, stdout: job.logPaths.stdout, stderr: job.logPaths.stderr, step: job.spec.name };
      const handle: JobHandle = { jobId: job.jobKey, executor: name, info };
      const tracked = trackedFrom(handle) as Tracked;
      active.set(handle.jobId, tracked);
      if (job.signal.aborted) void executor.cancel([handle]).catch(() => undefined);
      else job.signal.addEventListener('abort', () => void executor.cancel([handle]).catch((e: Error) => host?.logger.warn(`slurm: ${e.message}`)), { once: true });
      kick();
      return handle;
    },

    async poll(handles) {
      const jobs = handles.map((h) => active.get(h.jobId) ?? trackedFrom(h)).filter((j): j is Tracked => j !== undefined);
      const statuses = await observe(jobs);
      const out = new Map<string, JobStatus>();
      for (const h of handles) {
        const job = jobs.find((j) => j.handle.jobId === h.jobId);
        if (!job) {
          out.set(h.jobId, { state: 'lost', reason: 'not a Slurm job handle', infrastructure: true });
          continue;
        }
        out.set(h.jobId, statuses.get(job) ?? { state: job.lastState && !TERMINAL.has(job.lastState) ? job.lastState : 'running' });
      }
      return out;
    },

    async cancel(handles) {
      const ids: string[] = [];
      for (const h of handles) {
        const job = active.get(h.jobId) ?? trackedFrom(h);
        if (!job) continue;
        job.cancelRequested = true;
        ids.push(job.slurmId);
      }
      if (ids.length === 0) return;
      await transport.cancel(ids);
      kick();
    },

    logs(handle, opts) {
      const job = active.get(handle.jobId) ?? trackedFrom(handle);
      if (!job) throw new CairnError('CAIRN_EXECUTOR', `Job ${handle.jobId} is not a Slurm job handle (no slurmJobId in its info).`);
      return tailLogs(job.logs, { follow: opts.follow, signal: opts.signal, isRunning: () => active.has(handle.jobId) });
    },

    async adopt(handle) {
      needHost();
      if (handle.executor !== name) return null;
      const job = trackedFrom(handle);
      if (!job) return null;
      if (active.has(handle.jobId)) return handle;
      const queue = await transport.query([job.slurmId]);
      if (!queue.has(job.slurmId) && !existsSync(job.files.exit)) {
        const done = await transport.finished([job.slurmId]);
        if (!done.has(job.slurmId)) return null;
      }
      active.set(handle.jobId, job);
      kick();
      return handle;
    },

    async stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      active.clear();
    },
  };
  return executor;
}

/** Registers the executor with a runner as `slurm`. */
export const slurmExecutorFactory = { name: 'slurm', create: (options: SlurmExecutorOptions) => createSlurmExecutor(options) } as const;
