/**
 * The SSH executor's `Executor` contract: the options checked, the hosts readied at `start`, and
 * each contract call handed to the module that does it (see fleet.ts for the layout). What
 * every module shares is one `Fleet`.
 */
import { CairnError } from '@cairn/core';
import { decodeResult, rebuildError, type Executor, type ExecutorCapabilities, type ExecutorHost, type JobHandle, type JobRequest, type JobStatus } from '@cairn/runner/executor';
import { cancel } from './cancel.js';
import { Fleet } from './fleet.js';
import { sshWorkerBundle } from './host-worker.js';
import { ready } from './hosts.js';
import { entryBundle, jobDirName } from './launch.js';
import { checkSshOptions, type SshExecutorOptions } from './options.js';
import { demandOf, type Demand } from './placement.js';
import { shScript } from './quote.js';
import { CAT_LOGS_SCRIPT, FOLLOW_SCRIPT, type RemoteJobState } from './remote-script.js';
import { promisify } from './sftp.js';
import type { HostState, Job, SshJobInfo } from './state.js';
import { finish } from './finish.js';
import { statusOf, tick } from './status.js';
import { chooseRunsIn } from './worker-policy.js';

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
  readonly #f: Fleet;
  #timer: NodeJS.Timeout | undefined;
  #started: Promise<void> | undefined;

  constructor(options: SshExecutorOptions) {
    checkSshOptions(options);
    this.#f = new Fleet(options);
    this.name = this.#f.name;
    this.capabilities = Object.freeze({ remote: true, sharedFs: this.#f.opts.sharedFs, deploysCode: true, inProcess: false, cancel: 'reliable', logs: true, resumable: true });
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
    const { runsIn } = chooseRunsIn(job.spec.name, job.resources, f.workerMode);
    const stepBundle = await f.bundler.bundle(job.task.ref.module, 'step.mjs');
    await (runsIn === 'worker' ? sshWorkerBundle(f) : entryBundle(f));
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
    const j = f.newJob(job.jobKey, info, demand, { phase: 'queued', host: undefined, request: job, stepBundle, runsIn });
    f.jobs.set(j.id, j);
    f.queue.push(j);
    job.signal.addEventListener('abort', () => void this.cancel([j.handle]).catch(() => {}), { once: true });
    const launched = f.pump().get(j);
    if (launched) await launched; // a host had room: hand back the complete handle
    j.handedOut = true;
    if (j.pending.length > 0) setImmediate(() => f.flush(j));
    return j.handle;
  }

  async poll(handles: readonly JobHandle[]): Promise<Map<string, JobStatus>> {
    const out = new Map<string, JobStatus>();
    const byHost = new Map<HostState, JobHandle[]>();
    for (const hd of handles) {
      const tracked = this.#f.jobs.get(hd.jobId);
      if (tracked && (tracked.phase === 'queued' || tracked.phase === 'launching')) {
        out.set(hd.jobId, { state: 'queued' });
        continue;
      }
      const h = this.#f.hostOf(hd);
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
          states = await statusOf(
            this.#f,
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

  cancel(handles: readonly JobHandle[]): Promise<void> {
    return cancel(this.#f, handles);
  }

  // ---- logs and adoption --------------------------------------------------------------

  async *logs(handle: JobHandle, options: { follow: boolean; signal?: AbortSignal }): AsyncIterable<string> {
    await this.#ensureStarted();
    const info = handle.info as unknown as SshJobInfo;
    const h = this.#f.hostOf(handle);
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
    if (this.#f.jobs.has(handle.jobId)) return (this.#f.jobs.get(handle.jobId) as Job).handle;
    let h = this.#f.hostOf(handle);
    if (!h || !info.jobDir) {
      // Submitted while queued: it may have started on any host since.
      for (const cand of this.#f.hosts) {
        if (cand.workDir === '') continue; // not reached (and checked) yet
        const dir = `${cand.workDir}/jobs/${info.jobDirName}`;
        const s = await statusOf(this.#f, cand, [dir]).catch(() => null);
        if (s && s[0]?.kind !== 'missing') {
          h = cand;
          info.host = cand.options.name;
          info.jobDir = dir;
          break;
        }
      }
      if (!h || !info.jobDir) return null;
    }
    const [state] = await statusOf(this.#f, h, [info.jobDir]);
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
    const j = this.#f.newJob(handle.jobId, info, demand, { phase: 'running', host: h, request: undefined, stepBundle: undefined, runsIn: info.runsIn });
    this.#f.jobs.set(j.id, j);
    if (state.kind === 'exited') void finish(this.#f, j, h, state.code);
    setImmediate(() => {
      j.handedOut = true;
      this.#f.flush(j);
    });
    return j.handle;
  }

  async stop(): Promise<void> {
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
      h.conn.close();
    }
  }
}
