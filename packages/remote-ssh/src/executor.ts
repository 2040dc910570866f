/**
 * The SSH executor's `Executor` contract: the options checked, the hosts readied at `start`, and
 * each contract call handed to the module that does it (see fleet.ts for the layout). What
 * every module shares is one `Fleet`.
 */
import { CairnError, COMMAND_MODULE } from '@cairn/core';
import type { Executor, ExecutorCapabilities, ExecutorHost, JobHandle, JobRequest, JobStatus } from '@cairn/runner/executor';
import { adopt } from './adopt.js';
import { cancel } from './cancel.js';
import { commandInfo } from './command.js';
import { Fleet } from './fleet.js';
import { closeShell } from './host-shell.js';
import { sshWorkerBundle } from './host-worker.js';
import { ready } from './hosts.js';
import { entryBundle, jobDirName } from './launch.js';
import { readLogs } from './logs.js';
import { checkSshOptions, type SshExecutorOptions } from './options.js';
import { demandOf } from './placement.js';
import type { HostState, SshJobInfo } from './model.js';
import { poll, tick } from './status.js';
import { chooseRunsIn, type RunsIn } from './worker-policy.js';


/**
 * An executor that runs steps on SSH hosts. One connection per host carries every exec and
 * SFTP channel. Steps are placed on a host with enough free CPUs, memory and GPUs (GPUs by
 * index, as `CUDA_VISIBLE_DEVICES`) and wait inside the executor when none has room. The step's
 * module and the worker entry are bundled with esbuild and uploaded once per content hash. Jobs
 * run detached (`setsid`): an exit-code file is the truth about completion, checked by ONE
 * batched exec per host per poll interval; a dropped SSH connection does not stop them, and a
 * new executor can `adopt` them. Small steps (`worker`, see `chooseRunsIn`) run instead in the
 * host's persistent worker, which writes the same job dir and pushes completions back on its
 * channel. A command step (`command()`) needs neither Node nor a bundle on the host: a POSIX
 * shell runs its program, its declared sources staged by content hash (see command.ts).
 */
export function createSshExecutor(options: SshExecutorOptions): Executor {
  return new SshExecutor(options);
}

class SshExecutor implements Executor {
  readonly name: string;
  readonly capabilities: ExecutorCapabilities;
  readonly #f: Fleet;
  #timer: NodeJS.Timeout | undefined;
  #started: Promise<void> | undefined;

  constructor(options: SshExecutorOptions) {
    checkSshOptions(options);
    this.#f = new Fleet(options);
    this.name = this.#f.name;
    // Secrets go over the SSH channel: the launch's stdin into a 0600 file the wrapper sources and deletes, or the worker's channel into memory (launch.ts).
    this.capabilities = Object.freeze({ remote: true, sharedFs: this.#f.opts.sharedFs, deploysCode: true, inProcess: false, cancel: 'reliable', logs: true, resumable: true, secrets: true });
  }

  start(host: ExecutorHost): Promise<void> {
    this.#f.host = host;
    this.#started ??= this.#start();
    return this.#started;
  }

  async #start(): Promise<void> {
    const f = this.#f;
    if (!f.opts.hostKeyVerification) {
      f.logger.warn(`[${this.name}] HOST KEY VERIFICATION IS DISABLED (hostKeyVerification: false): any machine answering at these addresses can impersonate your hosts and receive your code and data.`);
    }
    const results = await Promise.allSettled(f.hosts.map((h) => ready(h, f.opts.hostTimeoutMs)));
    const fatal: CairnError[] = [];
    results.forEach((r, i) => {
      const h = f.hosts[i] as HostState;
      if (r.status === 'fulfilled') return;
      if (h.conn.fatal) fatal.push(h.conn.fatal);
      else {
        h.downSince = Date.now();
        f.logger.warn(`[${this.name}] ${(r.reason as Error).message} Steps go to the other hosts until it answers.`);
      }
    });
    if (fatal.length === 1) throw fatal[0] as CairnError;
    if (fatal.length > 0) {
      throw new CairnError('CAIRN_REMOTE', fatal.map((e) => e.message).join('\n'), { cause: fatal[0] });
    }
    this.#timer ??= setInterval(() => tick(f), f.opts.pollIntervalMs);
  }

  async #ensureStarted(): Promise<void> {
    if (!this.#started) throw new CairnError('CAIRN_EXECUTOR', `Executor "${this.name}": call start() before submit/adopt.`);
    await this.#started;
  }

  async submit(job: JobRequest): Promise<JobHandle> {
    await this.#ensureStarted();
    const f = this.#f;
    const demand = demandOf(job.resources);
    if (!f.hosts.some((h) => h.slots.canEverFit(demand))) {
      const caps = f.hosts.map((h) => `${h.options.name}: ${h.slots.capacity.cpus} cpus, ${h.slots.capacity.memoryGb} GiB, ${h.slots.capacity.gpus.length} GPUs`).join('; ');
      throw new CairnError('CAIRN_EXECUTOR', `Step "${job.spec.name}" needs ${demand.cpus} cpus, ${demand.memoryGb} GiB and ${demand.gpus} GPUs; no host of executor "${this.name}" is that large (${caps}). Lower its resources or add a host.`, { step: job.spec.name });
    }
    if (f.jobs.has(job.jobKey)) throw new CairnError('CAIRN_EXECUTOR', `Executor "${this.name}": job ${job.jobKey} was already submitted.`, { step: job.spec.name });
    // A command step needs no Node on the host: no bundle, always detached (see command.ts).
    const isCommand = job.task.ref.module === COMMAND_MODULE;
    const runsIn: RunsIn = isCommand ? 'detached' : chooseRunsIn(job.spec.name, job.resources, f.workerMode).runsIn;
    const stepBundle = isCommand ? undefined : await f.bundler.bundle(job.task.ref.module, 'step.mjs');
    if (!isCommand) await (runsIn === 'worker' ? sshWorkerBundle(f) : entryBundle(f));
    const info: SshJobInfo = {
      jobDirName: jobDirName(job.jobKey),
      step: job.spec.name,
      outputPath: job.outputPath,
      logPaths: { stdout: job.logPaths.stdout, stderr: job.logPaths.stderr },
      cpus: demand.cpus,
      memoryGb: demand.memoryGb,
      gpuIndices: [],
      runsIn,
      ...(isCommand ? { command: commandInfo(job.task) } : {}),
    };
    const j = f.newJob(job.jobKey, info, demand, { phase: 'queued', host: undefined, request: job, stepBundle, runsIn });
    f.jobs.set(j.id, j);
    f.queue.push(j);
    const launched = f.pump().get(j);
    if (launched) await launched; // a host had room: hand back the complete handle
    j.handedOut = true;
    if (j.pending.length > 0) setImmediate(() => f.flush(j));
    return j.handle;
  }

  poll(handles: readonly JobHandle[]): Promise<Map<string, JobStatus>> {
    return poll(this.#f, handles);
  }

  cancel(handles: readonly JobHandle[]): Promise<void> {
    return cancel(this.#f, handles);
  }

  async *logs(handle: JobHandle, options: { follow: boolean; signal?: AbortSignal }): AsyncIterable<string> {
    await this.#ensureStarted();
    yield* readLogs(this.#f, handle, options);
  }

  async adopt(handle: JobHandle): Promise<JobHandle | null> {
    await this.#ensureStarted();
    return adopt(this.#f, handle);
  }

  async stop(): Promise<void> {
    // Cancels under way reach their hosts first (on connections of their own): a run that ends
    // right after Ctrl-C or a timeout must not cut off the TERM it just asked for.
    this.#f.stopped = true;
    await Promise.all([...this.#f.control]);
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    if (this.#f.downTimer) clearTimeout(this.#f.downTimer);
    this.#f.downTimer = undefined;
    for (const j of this.#f.queue.splice(0)) this.#f.end(j, { state: 'cancelled', reason: 'executor stopped' });
    for (const h of this.#f.hosts) {
      // The worker keeps running its steps (adoptable) and exits once idle.
      if (h.link) h.link.onClose = () => {};
      h.link?.close();
      h.link = undefined;
      closeShell(h);
      h.conn.close();
    }
  }
}
