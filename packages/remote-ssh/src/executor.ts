import { createHash } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { appendFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { CairnError, encodeTask, type TaskPayload } from '@cairn/core';
import { decodeResult, rebuildError, type Executor, type ExecutorCapabilities, type ExecutorHost, type JobHandle, type JobRequest, type JobStatus } from '@cairn/runner/executor';
import { HostConnection, type ExecResult } from './connection.js';
import { Bundler, CodeUploader, type CodeBundle } from './deploy.js';
import type { FromWorker } from './runtime/protocol.js';
import { WorkerLink } from './worker-link.js';
import { checkWorkerMode, chooseRunsIn, type WorkerMode } from './worker-policy.js';
import { checkSshOptions, type SshExecutorOptions, type SshHostOptions } from './options.js';
import { demandOf, HostSlots, type Demand } from './placement.js';
import { shScript } from './quote.js';
import {
  ALIVE_SCRIPT,
  CAT_LOGS_SCRIPT,
  CODE_MISMATCH_EXIT,
  FOLLOW_SCRIPT,
  LAUNCH_SCRIPT,
  parseStatus,
  SIGNAL_SCRIPT,
  STATUS_SCRIPT,
  TAIL_SCRIPT,
  WORKER_CANCEL_SCRIPT,
  WRAPPER_SCRIPT,
  type RemoteJobState,
} from './remote-script.js';
import { promisify } from './sftp.js';
import { downloadDir, uploadDir } from './staging.js';
import type { HostState, Inline, Job, SshJobInfo } from './state.js';
import { prepareWorkDir } from './workdir.js';

const LOG_TAIL_BYTES = 4000;

/** A bundle still did not match its hash after it was uploaded again: refused, never run. */
function codeMismatch(h: HostState, what: string, detail: string): CairnError {
  return new CairnError(
    'CAIRN_REMOTE',
    `SSH host "${h.options.name}": the code for ${what.startsWith('the ') ? what : `step "${what}"`} still does not match its SHA-256 after it was uploaded again (${detail.trim()}); it was not run. Something on the host is replacing files in ${h.workDir}: check who can write there.`,
    { retryable: true },
  );
}
/** After a worker step's cancel grace, how long its worker has to record the end before it is killed. */
const WORKER_CANCEL_SLACK_MS = 5000;

function jobDirName(jobKey: string): string {
  const safe = jobKey.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 80);
  return `${safe}-${createHash('sha256').update(jobKey).digest('hex').slice(0, 10)}`;
}

/** The persistent worker's entry: `dist/ssh-worker.js` next to the built package, else the TypeScript source (tests). */
function sshWorkerEntry(): string {
  const dir = dirname(fileURLToPath(import.meta.url));
  const built = join(dir, 'ssh-worker.js');
  return existsSync(built) ? built : join(dir, 'runtime', 'ssh-worker.ts');
}

function defaultWorkerEntry(): string {
  const pkg = createRequire(import.meta.url).resolve('@cairn/runner/package.json');
  return join(dirname(pkg), 'dist', 'worker-entry.js');
}

/**
 * An executor that runs steps on SSH hosts. One connection per host carries every exec and
 * SFTP channel. Steps are placed on a host with enough free CPUs, memory and GPUs (GPUs by
 * index, as `CUDA_VISIBLE_DEVICES`) and wait inside the executor when none has room. The step's
 * module and the worker entry are bundled with esbuild and uploaded once per content hash. Jobs
 * run detached (`setsid`): an exit-code file is the truth about completion, checked by ONE
 * batched exec per host per poll interval; a dropped SSH connection does not stop them, and a
 * new executor can `adopt` them. Small steps (`worker`, see `chooseRunsIn`) run instead in the
 * host's persistent worker, which writes the same job dir and pushes completions back on its
 * channel.
 */
export function createSshExecutor(options: SshExecutorOptions): Executor {
  return new SshExecutor(options);
}

class SshExecutor implements Executor {
  readonly name: string;
  readonly capabilities: ExecutorCapabilities;
  readonly #opts: Required<Pick<SshExecutorOptions, 'hostKeyVerification' | 'sharedFs' | 'pollIntervalMs' | 'hostTimeoutMs' | 'cancelGraceMs' | 'maxChannels'>>;
  readonly #hosts: HostState[];
  readonly #bundler = new Bundler();
  readonly #uploader = new CodeUploader();
  readonly #jobs = new Map<string, Job>();
  readonly #queue: Job[] = [];
  /** Re-runs placement when every host is down, so queued jobs fail instead of waiting forever. */
  #downTimer: NodeJS.Timeout | undefined;
  readonly #workerEntry: string;
  readonly #workerMode: WorkerMode;
  readonly #workerIdleMs: number;
  #host: ExecutorHost | undefined;
  #timer: NodeJS.Timeout | undefined;
  #started: Promise<void> | undefined;

  constructor(options: SshExecutorOptions) {
    checkSshOptions(options);
    if (!options || !Array.isArray(options.hosts) || options.hosts.length === 0) {
      throw new CairnError('CAIRN_CONFIG', 'createSshExecutor: `hosts` must list at least one host ({ name, host, user, privateKeyPath, capacity }).');
    }
    this.name = options.name ?? 'ssh';
    this.#opts = {
      hostKeyVerification: options.hostKeyVerification ?? true,
      sharedFs: options.sharedFs ?? false,
      pollIntervalMs: options.pollIntervalMs ?? 1000,
      hostTimeoutMs: options.hostTimeoutMs ?? 30_000,
      cancelGraceMs: options.cancelGraceMs ?? 5000,
      maxChannels: options.maxChannels ?? 8,
    };
    this.capabilities = Object.freeze({ remote: true, sharedFs: this.#opts.sharedFs, deploysCode: true, inProcess: false, cancel: 'reliable', logs: true, resumable: true });
    this.#workerEntry = options.workerEntry ?? defaultWorkerEntry();
    this.#workerMode = checkWorkerMode(options.worker);
    this.#workerIdleMs = options.workerIdleMs ?? 60_000;
    if (!Number.isFinite(this.#workerIdleMs) || this.#workerIdleMs <= 0) {
      throw new CairnError('CAIRN_CONFIG', `createSshExecutor: \`workerIdleMs\` must be a positive number of milliseconds (got ${JSON.stringify(options.workerIdleMs)}).`);
    }
    const names = new Set<string>();
    this.#hosts = options.hosts.map((h) => {
      if (!h.name || names.has(h.name)) throw new CairnError('CAIRN_CONFIG', `createSshExecutor: every host needs a unique name (got ${JSON.stringify(h.name)}).`);
      names.add(h.name);
      if (!h.host || !h.user) throw new CairnError('CAIRN_CONFIG', `SSH host "${h.name}": \`host\` and \`user\` are required.`);
      if (h.privateKey === undefined && h.privateKeyPath === undefined && !h.agent) {
        throw new CairnError('CAIRN_CONFIG', `SSH host "${h.name}": give one of privateKey, privateKeyPath or agent.`);
      }
      const conn = new HostConnection(
        { name: h.name, host: h.host, port: h.port ?? 22, user: h.user, privateKey: h.privateKey, privateKeyPath: h.privateKeyPath, agent: h.agent, knownHostsPath: h.knownHostsPath ?? join(homedir(), '.ssh', 'known_hosts') },
        { hostKeyVerification: this.#opts.hostKeyVerification, timeoutMs: Math.min(this.#opts.hostTimeoutMs, 20_000), maxChannels: this.#opts.maxChannels },
      );
      const state: HostState = {
        options: h,
        conn,
        slots: new HostSlots({ cpus: h.capacity?.cpus ?? 1, memoryGb: h.capacity?.memoryGb ?? Number.POSITIVE_INFINITY, gpus: [...(h.capacity?.gpus ?? [])] }),
        workDir: '',
        preparing: undefined,
        nodePath: h.nodePath ?? 'node',
        downSince: undefined,
        checking: false,
        workerCheckedAt: 0,
        orphans: [],
        cleanup: [],
        link: undefined,
        linking: undefined,
      };
      conn.onConnect = () => this.#onReconnect(state);
      return state;
    });
  }

  get #logger(): ExecutorHost['logger'] {
    return this.#host?.logger ?? { info: () => {}, warn: (m) => process.emitWarning(m), error: (m) => process.emitWarning(m) };
  }

  start(host: ExecutorHost): Promise<void> {
    this.#host = host;
    this.#started ??= this.#start();
    return this.#started;
  }

  async #start(): Promise<void> {
    if (!this.#opts.hostKeyVerification) {
      this.#logger.warn(`[${this.name}] HOST KEY VERIFICATION IS DISABLED (hostKeyVerification: false): any machine answering at these addresses can impersonate your hosts and receive your code and data.`);
    }
    const results = await Promise.allSettled(this.#hosts.map((h) => this.#ready(h)));
    const fatal: CairnError[] = [];
    results.forEach((r, i) => {
      const h = this.#hosts[i] as HostState;
      if (r.status === 'fulfilled') return;
      if (h.conn.fatal) fatal.push(h.conn.fatal);
      else {
        h.downSince = Date.now();
        this.#logger.warn(`[${this.name}] ${(r.reason as Error).message} Steps go to the other hosts until it answers.`);
      }
    });
    if (fatal.length === 1) throw fatal[0] as CairnError;
    if (fatal.length > 0) {
      throw new CairnError('CAIRN_REMOTE', fatal.map((e) => e.message).join('\n'), { cause: fatal[0] });
    }
    this.#timer ??= setInterval(() => this.#tick(), this.#opts.pollIntervalMs);
  }

  /**
   * Connects to `h` and, once per executor, checks its work dir (created 0700 when missing). An
   * unsafe work dir makes the host unusable for good (`conn.fatal`, `CAIRN_UNSAFE_DIR`), like a
   * refused host key: nothing is uploaded or run there.
   */
  #ready(h: HostState): Promise<void> {
    h.preparing ??= h.conn
      .ready()
      .then(() => prepareWorkDir(h.conn, h.options.workDir, Math.min(this.#opts.hostTimeoutMs, 20_000)))
      .then(
        (dir) => {
          h.workDir = dir;
        },
        (err: unknown) => {
          h.preparing = undefined;
          if (err instanceof CairnError && err.code === 'CAIRN_UNSAFE_DIR') h.conn.fatal = err;
          throw err;
        },
      );
    return h.preparing;
  }

  async #ensureStarted(): Promise<void> {
    if (!this.#started) throw new CairnError('CAIRN_EXECUTOR', `Executor "${this.name}": call start() before submit/adopt.`);
    await this.#started;
  }

  // ---- submission and placement ------------------------------------------------------

  async submit(job: JobRequest): Promise<JobHandle> {
    await this.#ensureStarted();
    const demand = demandOf(job.resources);
    if (!this.#hosts.some((h) => h.slots.canEverFit(demand))) {
      const caps = this.#hosts.map((h) => `${h.options.name}: ${h.slots.capacity.cpus} cpus, ${h.slots.capacity.memoryGb} GiB, ${h.slots.capacity.gpus.length} GPUs`).join('; ');
      throw new CairnError('CAIRN_EXECUTOR', `Step "${job.spec.name}" needs ${demand.cpus} cpus, ${demand.memoryGb} GiB and ${demand.gpus} GPUs; no host of executor "${this.name}" is that large (${caps}). Lower its resources or add a host.`, { step: job.spec.name });
    }
    if (this.#jobs.has(job.jobKey)) throw new CairnError('CAIRN_EXECUTOR', `Executor "${this.name}": job ${job.jobKey} was already submitted.`, { step: job.spec.name });
    const { runsIn } = chooseRunsIn(job.spec.name, job.resources, this.#workerMode);
    const stepBundle = await this.#bundler.bundle(job.task.ref.module, 'step.mjs');
    await (runsIn === 'worker' ? this.#sshWorkerBundle() : this.#bundler.bundle(pathToFileURL(this.#workerEntry).href, 'worker-entry.mjs'));
    const info: SshJobInfo = {
      jobDirName: jobDirName(job.jobKey),
      step: job.spec.name,
      outputPath: job.outputPath,
      logPaths: { stdout: job.logPaths.stdout, stderr: job.logPaths.stderr },
      cpus: demand.cpus,
      memoryGb: demand.memoryGb,
      gpuIndices: [],
      runsIn,
    };
    const j = this.#newJob(job.jobKey, info, demand, { phase: 'queued', host: undefined, request: job, stepBundle, runsIn });
    this.#jobs.set(j.id, j);
    this.#queue.push(j);
    job.signal.addEventListener('abort', () => void this.cancel([j.handle]).catch(() => {}), { once: true });
    const launched = this.#pump().get(j);
    if (launched) await launched; // a host had room: hand back the complete handle
    j.handedOut = true;
    if (j.pending.length > 0) setImmediate(() => this.#flush(j));
    return j.handle;
  }

  #usable(h: HostState): boolean {
    return !h.conn.fatal && h.downSince === undefined && h.workDir !== '';
  }

  /** Places queued jobs that fit (FIFO with backfill). Returns the launches started. */
  #pump(): Map<Job, Promise<void>> {
    const started = new Map<Job, Promise<void>>();
    for (const h of this.#hosts) {
      // A host that failed is retried (respecting the connection's backoff) before use.
      if (h.downSince !== undefined && !h.conn.fatal && !h.checking && this.#queue.length > 0) {
        this.#ready(h).then(
          () => {
            h.downSince = undefined;
            this.#pump();
          },
          () => {},
        );
      }
    }
    for (let i = 0; i < this.#queue.length; ) {
      const j = this.#queue[i] as Job;
      const candidates = this.#hosts.filter((h) => this.#usable(h) && !j.triedHosts.has(h.options.name) && h.slots.fits(j.demand));
      if (candidates.length === 0) {
        i++;
        continue;
      }
      const h = candidates.reduce((a, b) => (b.slots.freeShare > a.slots.freeShare ? b : a));
      this.#queue.splice(i, 1);
      const gpus = h.slots.take(j.demand);
      j.host = h;
      j.phase = 'launching';
      j.info.gpuIndices = gpus;
      j.info.host = h.options.name;
      j.info.jobDir = `${h.workDir}/jobs/${j.info.jobDirName}`;
      started.set(j, j.runsIn === 'worker' ? this.#launchInWorker(j, h) : this.#launch(j, h));
    }
    if (this.#queue.length > 0) this.#checkAllDown();
    return started;
  }

  /**
   * With no usable host, queued jobs would wait forever: once every host has been unreachable
   * for `hostTimeoutMs` (or refused us for good), they end as `lost` (an infrastructure failure
   * the runner retries a bounded number of times, then reports).
   */
  #checkAllDown(): void {
    if (this.#hosts.some((h) => this.#usable(h))) return;
    const now = Date.now();
    const timeout = this.#opts.hostTimeoutMs;
    let wait = 0;
    for (const h of this.#hosts) {
      if (h.conn.fatal) continue;
      const left = (h.downSince ?? now) + timeout - now;
      if (left > wait) wait = left;
    }
    if (wait <= 0) {
      const names = this.#hosts.map((h) => `${h.options.name} (${h.options.host}:${h.options.port ?? 22})`).join(', ');
      const err = new CairnError('CAIRN_REMOTE', `No SSH host is reachable: ${names} did not answer for ${timeout} ms. Check the hosts and their sshd, or add another host.`, { retryable: true });
      for (const j of this.#queue.splice(0)) this.#end(j, { state: 'lost', infrastructure: true, reason: err.message, error: err });
      return;
    }
    if (this.#downTimer) return;
    this.#downTimer = setTimeout(() => {
      this.#downTimer = undefined;
      if (this.#queue.length > 0) this.#pump();
    }, wait + 10);
    this.#downTimer.unref();
  }

  async #launch(j: Job, h: HostState): Promise<void> {
    const req = j.request as JobRequest;
    const jobDir = j.info.jobDir as string;
    try {
      const stepBundle = j.stepBundle as CodeBundle;
      const entryBundle = await this.#bundler.bundle(pathToFileURL(this.#workerEntry).href, 'worker-entry.mjs');
      let r: ExecResult | undefined;
      let task: TaskPayload | undefined;
      // The launch checks both bundles by content before it starts anything: a mismatch (a file
      // replaced since it was uploaded) is uploaded again, once; it never runs.
      for (let attempt = 1; ; attempt++) {
        const [stepPath, entryPath] = await Promise.all([this.#uploader.ensure(h.conn, h.workDir, stepBundle), this.#uploader.ensure(h.conn, h.workDir, entryBundle)]);
        task ??= await this.#remoteTask(j, h, req.task, jobDir, stepPath);
        const cuda = j.info.gpuIndices.join(',');
        r = await h.conn.exec(shScript(LAUNCH_SCRIPT, [jobDir, WRAPPER_SCRIPT, stepPath, stepBundle.sha256, entryBundle.sha256, h.nodePath, entryPath, cuda]), { stdin: encodeTask(task), timeoutMs: this.#opts.hostTimeoutMs });
        if (r.code !== CODE_MISMATCH_EXIT) break;
        this.#uploader.forget(h.conn, h.workDir, stepBundle);
        this.#uploader.forget(h.conn, h.workDir, entryBundle);
        if (attempt >= 2) throw codeMismatch(h, j.info.step, r.stderr);
        this.#logger.warn(`[${this.name}] SSH host "${h.options.name}": ${r.stderr.trim()} Uploading it again for "${j.info.step}".`);
      }
      const pid = Number.parseInt(r.stdout.toString('utf8').trim(), 10);
      if (r.code !== 0 || !Number.isInteger(pid) || pid <= 0) {
        throw new CairnError('CAIRN_REMOTE', `SSH host "${h.options.name}": could not start step "${j.info.step}" in ${jobDir} (exit ${r.code}): ${r.stderr.trim()}`, { step: j.info.step, retryable: true });
      }
      j.info.pid = pid;
      await this.#nowRunning(j, h);
    } catch (err) {
      this.#launchFailed(j, h, err);
    }
  }

  /** The bundle of the persistent worker (`ssh-worker.mjs`). */
  #sshWorkerBundle(): Promise<CodeBundle> {
    return this.#bundler.bundle(pathToFileURL(sshWorkerEntry()).href, 'ssh-worker.mjs');
  }

  /** The channel to the host's worker, starting the worker when none answers. */
  #linkFor(h: HostState): Promise<WorkerLink> {
    if (h.link?.up) return Promise.resolve(h.link);
    h.linking ??= (async () => {
      const bundle = await this.#sshWorkerBundle();
      // A worker that exits (idle) between the start script's check and the relay's connect
      // closes the channel before hello: the next attempt starts a new one. A worker bundle that
      // does not match its hash is not run: it is uploaded again, once.
      let link: WorkerLink | undefined;
      for (let attempt = 1, mismatches = 0; !link; attempt++) {
        const entry = await this.#uploader.ensure(h.conn, h.workDir, bundle);
        const target = { dir: `${h.workDir}/workers/${bundle.hash}`, nodePath: h.nodePath, entry, entrySha256: bundle.sha256, idleMs: this.#workerIdleMs };
        try {
          link = await WorkerLink.open(h.conn, target);
        } catch (err) {
          if ((err as { codeMismatch?: boolean }).codeMismatch) {
            this.#uploader.forget(h.conn, h.workDir, bundle);
            if (++mismatches >= 2) throw codeMismatch(h, 'the persistent worker', (err as Error).message);
            continue;
          }
          if (attempt >= 3 || !(err as { workerVanished?: boolean }).workerVanished) throw err;
        }
      }
      const opened = link;
      opened.onMessage = (msg) => this.#onWorkerMessage(h, msg);
      opened.onClose = () => this.#onWorkerClosed(h, opened);
      h.link = opened;
      return opened;
    })().finally(() => {
      h.linking = undefined;
    });
    return h.linking;
  }

  /**
   * Starts a step in the host's persistent worker: one line down the worker channel (no exec,
   * no SFTP for the task). The worker writes the job dir as the wrapper would; the handle's pid
   * is the worker's.
   */
  async #launchInWorker(j: Job, h: HostState): Promise<void> {
    const req = j.request as JobRequest;
    const jobDir = j.info.jobDir as string;
    try {
      const stepBundle = j.stepBundle as CodeBundle;
      const [stepPath, link] = await Promise.all([this.#uploader.ensure(h.conn, h.workDir, stepBundle), this.#linkFor(h)]);
      const task = await this.#remoteTask(j, h, req.task, jobDir, stepPath);
      const stage = !this.#opts.sharedFs;
      // The worker checks the bundle against sha256 before the step runs (and refuses a mismatch).
      const sent = link.send({ t: 'run', dir: jobDir, step: j.info.step, task: Buffer.from(encodeTask(task)).toString('base64'), code: stepPath, sha256: stepBundle.sha256, cuda: j.info.gpuIndices.join(','), manifest: stage });
      if (!sent) throw new CairnError('CAIRN_REMOTE', `SSH host "${h.options.name}": the channel to the persistent worker closed before step "${j.info.step}" was sent.`, { step: j.info.step, retryable: true });
      j.info.pid = link.pid;
      j.info.workerDir = link.target.dir;
      j.link = link;
      await this.#nowRunning(j, h);
    } catch (err) {
      this.#launchFailed(j, h, err);
    }
  }

  /** A step is running on `h` (detached or in the worker): reported, and killed at once if cancelled meanwhile. */
  async #nowRunning(j: Job, h: HostState): Promise<void> {
    j.phase = 'running';
    h.downSince = undefined;
    this.#report(j, { state: 'running' });
    if (j.cancelRequested) await this.#kill([j]);
  }

  #onWorkerMessage(h: HostState, msg: FromWorker): void {
    if (msg.t !== 'done' && msg.t !== 'rejected') return;
    let j: Job | undefined;
    for (const c of this.#jobs.values()) if (c.host === h && c.phase === 'running' && c.info.jobDir === msg.dir) j = c;
    if (!j) return; // another executor's job, or already ended by a status check
    if (msg.t === 'rejected') {
      // A bundle that did not verify is uploaded again by the retry (the runner retries a lost job).
      if (msg.codeMismatch && j.stepBundle) this.#uploader.forget(h.conn, h.workDir, j.stepBundle);
      const fix = msg.codeMismatch ? 'It is uploaded again and the step retried; nothing ran.' : `Check that workDir (${h.workDir}) is writable.`;
      const error = new CairnError('CAIRN_REMOTE', `SSH host "${h.options.name}": the persistent worker could not start step "${j.info.step}": ${msg.message}. ${fix}`, { step: j.info.step, retryable: true });
      this.#end(j, { state: 'lost', infrastructure: true, reason: error.message, error });
      return;
    }
    const b64 = (v: string | undefined) => (v === undefined ? undefined : Buffer.from(v, 'base64'));
    void this.#finish(j, h, msg.code, { result: b64(msg.result) ?? null, stdout: b64(msg.stdout), stderr: b64(msg.stderr), out: msg.out });
  }

  /** The worker died or the connection dropped: its jobs fall back to the status check, now. */
  #onWorkerClosed(h: HostState, link: WorkerLink): void {
    if (h.link === link) h.link = undefined;
    const waiting = [...this.#jobs.values()].filter((j) => j.link === link);
    for (const j of waiting) j.link = undefined;
    const running = waiting.filter((j) => j.phase === 'running');
    if (running.length > 0 && !h.checking) void this.#check(h, running);
  }

  /** A job's record, submitted (`queued`) or adopted (`running`): no link, nothing tried, nothing pending yet. */
  #newJob(id: string, info: SshJobInfo, demand: Demand, start: Pick<Job, 'phase' | 'host' | 'request' | 'stepBundle' | 'runsIn'>): Job {
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
    };
  }

  /** A launch failed: another host may take the job; otherwise it is lost (an infrastructure failure the runner retries). */
  #launchFailed(j: Job, h: HostState, err: unknown): void {
    h.slots.release(j.demand, j.info.gpuIndices);
    j.info.gpuIndices = [];
    const unreachable = err instanceof CairnError && err.code === 'CAIRN_REMOTE' && err.retryable && !h.conn.connected;
    if (unreachable) h.downSince ??= Date.now();
    j.triedHosts.add(h.options.name);
    // Another host may take it; otherwise it is lost (an infrastructure failure the runner retries).
    if (!j.cancelRequested && this.#hosts.some((o) => !o.conn.fatal && !j.triedHosts.has(o.options.name) && o.slots.canEverFit(j.demand))) {
      this.#logger.warn(`[${this.name}] ${(err as Error).message} Trying another host for "${j.info.step}".`);
      j.phase = 'queued';
      j.host = undefined;
      this.#queue.unshift(j);
      this.#pump();
      return;
    }
    this.#end(j, j.cancelRequested ? { state: 'cancelled' } : { state: 'lost', infrastructure: true, reason: (err as Error).message, error: err });
  }

  /** The task as the host sees it: the uploaded bundle, remote output and dependency paths, assigned GPUs. */
  async #remoteTask(j: Job, h: HostState, task: TaskPayload, jobDir: string, stepPath: string): Promise<TaskPayload> {
    const resources = { ...task.resources, gpuIndices: j.info.gpuIndices };
    const ref = { module: pathToFileURL(stepPath).href, export: task.ref.export };
    if (this.#opts.sharedFs) {
      j.info.remoteOutputPath = task.outputPath;
      return { ...task, ref, resources };
    }
    const depPaths: Record<string, string> = {};
    for (const [key, local] of Object.entries(task.depPaths)) {
      if (isAbsolute(local) && existsSync(local) && statSync(local).isDirectory()) {
        const remote = `${jobDir}/deps/${jobDirName(key)}`;
        await uploadDir(h.conn, local, remote);
        depPaths[key] = remote;
      } else depPaths[key] = local; // a URL or missing path: passed through unchanged
    }
    const outputPath = `${jobDir}/out`;
    j.info.remoteOutputPath = outputPath;
    return { ...task, ref, outputPath, depPaths, resources };
  }

  // ---- status ------------------------------------------------------------------------

  #tick(): void {
    const now = Date.now();
    for (const h of this.#hosts) {
      if (h.checking) continue;
      // A worker step's completion arrives on the worker channel while it is up: it needs no
      // poll for speed. It is still checked now and then (a third of hostTimeoutMs): a host whose
      // sshd stops taking new channels can keep an old one open, and its steps must then be lost
      // like any other on an unreachable host.
      const due = now - h.workerCheckedAt >= Math.max(this.#opts.pollIntervalMs, this.#opts.hostTimeoutMs / 3);
      const jobs = [...this.#jobs.values()].filter((j) => j.host === h && j.phase === 'running' && (due || !j.link?.up));
      if (jobs.length === 0) continue;
      if (jobs.some((j) => j.link?.up)) h.workerCheckedAt = now;
      void this.#check(h, jobs);
    }
    if (this.#queue.length > 0) this.#pump();
  }

  async #statusOf(h: HostState, jobDirs: readonly string[]): Promise<RemoteJobState[]> {
    const cleanup = h.cleanup.splice(0);
    const r = await h.conn.exec(shScript(STATUS_SCRIPT, [...cleanup, '--', ...jobDirs]), { timeoutMs: this.#opts.hostTimeoutMs }).catch((err: unknown) => {
      h.cleanup.push(...cleanup);
      throw err;
    });
    if (r.code !== 0) throw new CairnError('CAIRN_REMOTE', `SSH host "${h.options.name}": the status check failed (exit ${r.code}): ${r.stderr.trim()}`, { retryable: true });
    return parseStatus(r.stdout.toString('utf8'), jobDirs.length);
  }

  /** ONE exec for all of a host's running jobs. */
  async #check(h: HostState, jobs: Job[]): Promise<void> {
    h.checking = true;
    try {
      const states = await this.#statusOf(
        h,
        jobs.map((j) => j.info.jobDir as string),
      );
      h.downSince = undefined;
      states.forEach((s, i) => {
        const j = jobs[i] as Job;
        if (j.phase !== 'running') return;
        if (s.kind === 'exited') void this.#finish(j, h, s.code);
        // A worker step goes down its channel before the worker makes its job dir: while the
        // channel is up, a missing dir means "not started yet" (the worker answers `done` or
        // `rejected` for every step it was sent), never "lost" (which would run it twice).
        else if (s.kind === 'missing' && j.runsIn === 'worker' && j.link?.up) return;
        else if (s.kind === 'gone' || s.kind === 'missing') {
          if (j.cancelRequested) this.#end(j, { state: 'cancelled', exitCode: null });
          else if (j.runsIn === 'worker') {
            const error = this.#workerLostError(j, h, s.kind);
            this.#end(j, { state: 'lost', infrastructure: true, reason: error.message, error });
          } else this.#end(j, { state: 'lost', infrastructure: true, reason: `job vanished on ${h.options.name} (killed or the host rebooted)` });
        }
      });
    } catch (err) {
      h.downSince ??= Date.now();
      if (Date.now() - h.downSince >= this.#opts.hostTimeoutMs) this.#loseHost(h, err as Error);
    } finally {
      h.checking = false;
    }
  }

  /** A worker step whose worker ended before it: says which step, which worker, and where its log is. */
  #workerLostError(j: Job, h: HostState, kind: 'gone' | 'missing'): CairnError {
    const where = `the persistent worker on SSH host "${h.options.name}" (pid ${j.info.pid ?? '?'})`;
    const what = kind === 'gone' ? `Step "${j.info.step}" was running in ${where}, which ended before the step did` : `Step "${j.info.step}" was sent to ${where} but never started there (the worker ended, or the connection dropped before the step reached it)`;
    const cause = kind === 'gone' ? ' (killed, out of memory, or the host rebooted; see' : ' (see';
    return new CairnError(
      'CAIRN_REMOTE',
      `${what}${cause} ${j.info.workerDir ?? `${h.workDir}/workers`}/worker.log). The step is retried; a new worker starts on demand. To keep a step out of the worker, give it resources.hints.sshWorker: false.`,
      { step: j.info.step, retryable: true },
    );
  }

  #loseHost(h: HostState, err: Error): void {
    // New steps must not go down an old worker channel to a host declared unreachable.
    const link = h.link;
    h.link = undefined;
    link?.close();
    for (const j of this.#jobs.values()) {
      if (j.host !== h || (j.phase !== 'running' && j.phase !== 'finishing')) continue;
      if (j.info.pid) h.orphans.push({ pid: j.info.pid, jobDir: j.info.jobDir, runsIn: j.runsIn });
      this.#end(j, { state: 'lost', infrastructure: true, reason: `host unreachable: ${h.options.name}`, error: err });
    }
    this.#logger.warn(`[${this.name}] SSH host "${h.options.name}" unreachable for ${this.#opts.hostTimeoutMs} ms: its jobs are lost and will be retried; new steps go to other hosts.`);
  }

  /** Kills the process groups of jobs declared lost while the host was away, so they cannot race their retries. */
  #onReconnect(h: HostState): void {
    const orphans = h.orphans.splice(0);
    if (orphans.length === 0) return;
    const retry = () => void h.orphans.push(...orphans);
    // A detached job is its own process group; a worker step is stopped by its worker (grace 0).
    const pgids = orphans.filter((o) => o.runsIn === 'detached').map((o) => String(o.pid));
    const dirs = orphans.filter((o) => o.runsIn === 'worker' && o.jobDir).map((o) => o.jobDir as string);
    if (pgids.length > 0) h.conn.exec(shScript(SIGNAL_SCRIPT, ['KILL', ...pgids])).catch(retry);
    if (dirs.length > 0) h.conn.exec(shScript(WORKER_CANCEL_SCRIPT, ['0', ...dirs])).catch(retry);
  }

  /** Collects an ended job: logs, result, staged outputs. `inline` is what a worker's `done` carried. */
  async #finish(j: Job, h: HostState, code: number, inline?: Inline): Promise<void> {
    j.phase = 'finishing';
    const jobDir = j.info.jobDir as string;
    try {
      const staging = code === 0 && !this.#opts.sharedFs && j.info.remoteOutputPath !== undefined;
      const readResult = async () => promisify(await h.conn.sftp()).readFile(`${jobDir}/result.msgpack`).catch(() => null);
      // Logs, result and outputs in parallel: one round trip's latency, not three.
      const [, bytes, staged] = await Promise.all([
        inline?.stdout && inline.stderr ? this.#appendLogs(j, inline.stdout, inline.stderr) : this.#copyLogs(j, h),
        inline ? inline.result : readResult(),
        staging ? downloadDir(h.conn, j.info.remoteOutputPath as string, j.info.outputPath, inline?.out).then(() => true) : Promise.resolve(false),
      ]);
      const result = bytes ? decodeResult(bytes) : null;
      if (code === 0 && result?.ok) {
        if (staged) this.#removeLater(h, [`${jobDir}/out`, `${jobDir}/deps`]);
        this.#end(j, { state: 'succeeded', result: result.result, exitCode: 0 });
        return;
      }
      if (j.cancelRequested) {
        this.#end(j, { state: 'cancelled', exitCode: code });
        return;
      }
      const tail = await this.#stderrTail(j, h);
      const where = `on SSH host "${h.options.name}" (${jobDir})`;
      let error: Error;
      if (result && !result.ok) {
        error = rebuildError(result.error, j.info.step);
        Object.assign(error, { exitCode: code, logTail: tail, host: h.options.name });
      } else {
        error = new CairnError('CAIRN_REMOTE', `Step "${j.info.step}" exited with code ${code} ${where} without a result.${tail ? ` Last stderr:\n${tail}` : ''}`, { step: j.info.step });
        Object.assign(error, { exitCode: code, logTail: tail, host: h.options.name });
      }
      this.#end(j, { state: 'failed', error, exitCode: code, reason: `exit code ${code}` });
    } catch (err) {
      if (j.phase !== 'finishing') return;
      this.#end(j, { state: 'lost', infrastructure: true, reason: `collecting the result failed: ${(err as Error).message}`, error: err });
    }
  }

  async #stderrTail(j: Job, h: HostState): Promise<string> {
    try {
      const local = await readFile(j.info.logPaths.stderr, 'utf8');
      return local.slice(-LOG_TAIL_BYTES);
    } catch {
      const r = await h.conn.exec(shScript(TAIL_SCRIPT, [String(LOG_TAIL_BYTES), `${j.info.jobDir}/stderr.log`])).catch(() => null);
      return r?.stdout.toString('utf8') ?? '';
    }
  }

  /** Copies the remote logs to the job's local log files. */
  async #copyLogs(j: Job, h: HostState): Promise<void> {
    const sftp = promisify(await h.conn.sftp());
    const read = (k: 'stdout' | 'stderr') => sftp.readFile(`${j.info.jobDir}/${k}.log`).catch(() => Buffer.alloc(0));
    const [stdout, stderr] = await Promise.all([read('stdout'), read('stderr')]);
    await this.#appendLogs(j, stdout, stderr);
  }

  /** Appends a job's log contents to its local log files (creating them when empty). */
  async #appendLogs(j: Job, stdout: Buffer, stderr: Buffer): Promise<void> {
    await Promise.all(
      ([['stdout', stdout], ['stderr', stderr]] as const).map(async ([k, data]) => {
        const local = j.info.logPaths[k];
        await mkdir(dirname(local), { recursive: true });
        if (data.length > 0) await appendFile(local, data);
        else if (!existsSync(local)) await writeFile(local, '');
      }),
    );
  }

  /** Removes remote dirs: by the worker when its channel is up (no exec), else with the next status check. */
  #removeLater(h: HostState, dirs: string[]): void {
    if (h.link?.send({ t: 'cleanup', dirs })) return;
    h.cleanup.push(...dirs);
  }

  /** Ends a job: frees its slots, reports its terminal status, places waiting jobs. */
  #end(j: Job, status: JobStatus): void {
    if (j.phase === 'done') return;
    const wasPlaced = j.phase !== 'queued';
    j.phase = 'done';
    if (wasPlaced && j.host) j.host.slots.release(j.demand, j.info.gpuIndices);
    const qi = this.#queue.indexOf(j);
    if (qi >= 0) this.#queue.splice(qi, 1);
    this.#jobs.delete(j.id);
    for (const f of j.onEnd.splice(0)) f();
    this.#report(j, status);
    if (this.#queue.length > 0) this.#pump();
  }

  #report(j: Job, status: JobStatus): void {
    j.pending.push(status);
    if (j.handedOut) this.#flush(j);
  }

  #flush(j: Job): void {
    for (const s of j.pending.splice(0)) this.#host?.report(j.id, s);
  }

  async poll(handles: readonly JobHandle[]): Promise<Map<string, JobStatus>> {
    const out = new Map<string, JobStatus>();
    const byHost = new Map<HostState, JobHandle[]>();
    for (const hd of handles) {
      const tracked = this.#jobs.get(hd.jobId);
      if (tracked && (tracked.phase === 'queued' || tracked.phase === 'launching')) {
        out.set(hd.jobId, { state: 'queued' });
        continue;
      }
      const h = this.#hostOf(hd);
      if (!h || !(hd.info as Partial<SshJobInfo>).jobDir) {
        out.set(hd.jobId, { state: 'lost', infrastructure: true, reason: 'unknown host or job dir' });
        continue;
      }
      byHost.set(h, [...(byHost.get(h) ?? []), hd]);
    }
    await Promise.all(
      [...byHost].map(async ([h, list]) => {
        let states: RemoteJobState[];
        try {
          states = await this.#statusOf(
            h,
            list.map((hd) => (hd.info as unknown as SshJobInfo).jobDir as string),
          );
        } catch (err) {
          for (const hd of list) out.set(hd.jobId, { state: 'running', reason: `host unreachable: ${(err as Error).message}` });
          return;
        }
        await Promise.all(
          list.map(async (hd, i) => {
            const s = states[i] as RemoteJobState;
            if (s.kind === 'running') out.set(hd.jobId, { state: 'running' });
            else if (s.kind !== 'exited') out.set(hd.jobId, { state: 'lost', infrastructure: true, reason: 'job vanished' });
            else {
              const info = hd.info as unknown as SshJobInfo;
              const bytes = await promisify(await h.conn.sftp())
                .readFile(`${info.jobDir}/result.msgpack`)
                .catch(() => null);
              const r = bytes ? decodeResult(bytes) : null;
              if (s.code === 0 && r?.ok) out.set(hd.jobId, { state: 'succeeded', result: r.result, exitCode: 0 });
              else out.set(hd.jobId, { state: 'failed', exitCode: s.code, error: r && !r.ok ? rebuildError(r.error, info.step) : undefined, reason: `exit code ${s.code}` });
            }
          }),
        );
      }),
    );
    return out;
  }

  #hostOf(hd: JobHandle): HostState | undefined {
    const name = (hd.info as Partial<SshJobInfo>).host;
    return this.#hosts.find((h) => h.options.name === name);
  }

  // ---- cancel --------------------------------------------------------------------------

  async cancel(handles: readonly JobHandle[]): Promise<void> {
    const toKill: Job[] = [];
    for (const hd of handles) {
      const j = this.#jobs.get(hd.jobId);
      if (!j) continue;
      j.cancelRequested = true;
      if (j.phase === 'queued') this.#end(j, { state: 'cancelled' });
      else if (j.phase === 'running') toKill.push(j);
      // 'launching' kills itself once started; 'finishing' already ended.
    }
    await this.#kill(toKill);
  }

  /** Stops jobs, batched per host: detached jobs by process group, worker steps through their worker. */
  async #kill(jobs: Job[]): Promise<void> {
    const detached = new Map<HostState, Job[]>();
    const inWorker = new Map<HostState, Job[]>();
    for (const j of jobs) {
      const to = j.runsIn === 'worker' ? inWorker : detached;
      if (j.host && j.info.pid) to.set(j.host, [...(to.get(j.host) ?? []), j]);
    }
    await Promise.all([...[...detached].map(([h, list]) => this.#killDetached(h, list)), ...[...inWorker].map(([h, list]) => this.#killInWorker(h, list))]);
  }

  /** TERM to each job's process group (one exec per host), then KILL after the grace; reports once gone. */
  async #killDetached(h: HostState, list: Job[]): Promise<void> {
    const pgids = list.map((j) => String(j.info.pid));
    try {
      let alive = await this.#signal(h, SIGNAL_SCRIPT, ['TERM', ...pgids]);
      const deadline = Date.now() + this.#opts.cancelGraceMs;
      while (alive.length > 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
        alive = await this.#signal(h, ALIVE_SCRIPT, alive);
      }
      if (alive.length > 0) await this.#signal(h, SIGNAL_SCRIPT, ['KILL', ...alive]);
    } catch (err) {
      this.#logger.warn(`[${this.name}] cancel on SSH host "${h.options.name}": ${(err as Error).message}`);
      return;
    }
    if (!h.checking) await this.#check(h, list);
  }

  /**
   * Cancels worker steps: a `cancel` message on the worker channel or, for adopted steps, one
   * exec that writes each job's `cancel` file and signals its worker. The worker aborts the step's
   * `ctx.signal` and TERMs its subprocesses, then after the grace stops the
   * step's thread and KILLs what is left, and records exit 143. The job ends when that is seen
   * (pushed on the worker channel, or by the status check). A worker that has not done so
   * `WORKER_CANCEL_SLACK_MS` after the grace is broken: its process group is killed (its other
   * steps become lost and are retried), so cancel stays reliable.
   */
  async #killInWorker(h: HostState, list: Job[]): Promise<void> {
    const grace = this.#opts.cancelGraceMs;
    // On the channel that sent the step when it is up (ordered after the `run`), else by exec.
    const byLink = new Map<WorkerLink, string[]>();
    const byExec: string[] = [];
    for (const j of list) {
      if (j.link?.up) byLink.set(j.link, [...(byLink.get(j.link) ?? []), j.info.jobDir as string]);
      else byExec.push(j.info.jobDir as string);
    }
    for (const [link, dirs] of byLink) if (!link.send({ t: 'cancel', dirs, graceMs: grace })) byExec.push(...dirs);
    try {
      if (byExec.length > 0) {
        const r = await h.conn.exec(shScript(WORKER_CANCEL_SCRIPT, [String(grace), ...byExec]), { timeoutMs: this.#opts.hostTimeoutMs });
        if (r.code !== 0) throw new Error(`exit ${r.code}: ${r.stderr.trim()}`);
      }
    } catch (err) {
      this.#logger.warn(`[${this.name}] cancel on SSH host "${h.options.name}": ${(err as Error).message}`);
      return;
    }
    const ended = (j: Job) => new Promise<void>((resolve) => (j.phase === 'done' ? resolve() : j.onEnd.push(resolve)));
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, grace + WORKER_CANCEL_SLACK_MS);
    });
    await Promise.race([Promise.all(list.map(ended)), late]);
    clearTimeout(timer);
    const stuck = list.filter((j) => j.phase !== 'done');
    if (stuck.length === 0) return;
    const pids = [...new Set(stuck.map((j) => String(j.info.pid)))];
    this.#logger.warn(`[${this.name}] the persistent worker on SSH host "${h.options.name}" (pid ${pids.join(', ')}) did not stop ${stuck.map((j) => `"${j.info.step}"`).join(', ')} within ${grace + WORKER_CANCEL_SLACK_MS} ms: killing the worker; its other steps are retried.`);
    await h.conn.exec(shScript(SIGNAL_SCRIPT, ['KILL', ...pids]), { timeoutMs: this.#opts.hostTimeoutMs }).catch(() => {});
    if (!h.checking) await this.#check(h, stuck);
  }

  async #signal(h: HostState, script: string, args: string[]): Promise<string[]> {
    const r = await h.conn.exec(shScript(script, args), { timeoutMs: this.#opts.hostTimeoutMs });
    return r.stdout.toString('utf8').split('\n').filter((l) => /^\d+$/.test(l));
  }

  // ---- logs and adoption --------------------------------------------------------------

  async *logs(handle: JobHandle, options: { follow: boolean; signal?: AbortSignal }): AsyncIterable<string> {
    await this.#ensureStarted();
    const info = handle.info as unknown as SshJobInfo;
    const h = this.#hostOf(handle);
    if (!h || !info.jobDir) return;
    const files = [`${info.jobDir}/stdout.log`, `${info.jobDir}/stderr.log`];
    if (!options.follow) {
      const r = await h.conn.exec(shScript(CAT_LOGS_SCRIPT, files));
      for (const line of r.stdout.toString('utf8').split('\n')) if (line !== '') yield line;
      return;
    }
    const { channel, release } = await h.conn.stream(shScript(FOLLOW_SCRIPT, [String(info.pid ?? 0), ...files, `${info.jobDir}/exit`]));
    channel.stderr.resume();
    const onAbort = () => channel.close();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    let rest = '';
    try {
      for await (const chunk of channel as AsyncIterable<Buffer>) {
        rest += chunk.toString('utf8');
        const lines = rest.split('\n');
        rest = lines.pop() ?? '';
        for (const l of lines) yield l;
        if (options.signal?.aborted) break;
      }
      if (rest !== '') yield rest;
    } finally {
      options.signal?.removeEventListener('abort', onAbort);
      channel.close();
      release();
    }
  }

  async adopt(handle: JobHandle): Promise<JobHandle | null> {
    await this.#ensureStarted();
    const info = { ...(handle.info as unknown as SshJobInfo) };
    if (this.#jobs.has(handle.jobId)) return (this.#jobs.get(handle.jobId) as Job).handle;
    let h = this.#hostOf(handle);
    if (!h || !info.jobDir) {
      // Submitted while queued: it may have started on any host since.
      for (const cand of this.#hosts) {
        if (cand.workDir === '') continue; // not reached (and checked) yet
        const dir = `${cand.workDir}/jobs/${info.jobDirName}`;
        const s = await this.#statusOf(cand, [dir]).catch(() => null);
        if (s && s[0]?.kind !== 'missing') {
          h = cand;
          info.host = cand.options.name;
          info.jobDir = dir;
          break;
        }
      }
      if (!h || !info.jobDir) return null;
    }
    const [state] = await this.#statusOf(h, [info.jobDir]);
    if (!state || state.kind === 'missing' || state.kind === 'gone') return null;
    const sftp = promisify(await h.conn.sftp());
    if (!info.pid) {
      const pid = await sftp
        .readFile(`${info.jobDir}/pid`)
        .then((b) => Number.parseInt(b.toString('utf8'), 10))
        .catch(() => 0);
      info.pid = pid || undefined;
    }
    if (!info.runsIn) {
      // Recorded before launch (or by an older version): the worker leaves a marker in the job dir.
      const workerDir = await sftp.readFile(`${info.jobDir}/worker`).then((b) => b.toString('utf8').trim(), () => undefined);
      info.runsIn = workerDir ? 'worker' : 'detached';
      if (workerDir) info.workerDir = workerDir;
    }
    const demand: Demand = { cpus: info.cpus ?? 1, memoryGb: info.memoryGb ?? 0, gpus: info.gpuIndices?.length ?? 0 };
    h.slots.reserve(demand, info.gpuIndices ?? []);
    // No worker link: polled, since its completion may have been pushed to the runner that is gone.
    const j = this.#newJob(handle.jobId, info, demand, { phase: 'running', host: h, request: undefined, stepBundle: undefined, runsIn: info.runsIn });
    this.#jobs.set(j.id, j);
    if (state.kind === 'exited') void this.#finish(j, h, state.code);
    setImmediate(() => {
      j.handedOut = true;
      this.#flush(j);
    });
    return j.handle;
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    if (this.#downTimer) clearTimeout(this.#downTimer);
    this.#downTimer = undefined;
    for (const j of this.#queue.splice(0)) this.#end(j, { state: 'cancelled', reason: 'executor stopped' });
    for (const h of this.#hosts) {
      // The worker keeps running its steps (adoptable) and exits once idle.
      if (h.link) h.link.onClose = () => {};
      h.link?.close();
      h.link = undefined;
      h.conn.close();
    }
  }
}
