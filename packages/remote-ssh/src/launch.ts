/**
 * Starting a placed job on its host, one of two ways: detached (the launch script checks both
 * bundles by content, takes the job dir's lock, starts the wrapper under `setsid` and prints its
 * pid: the job's process group; a job dir that runs a live copy is adopted or refused, never run
 * twice) or in the host's persistent worker (one `run` line down its channel: no exec, no SFTP
 * for the task). Either way the task is rewritten for the host first (`remoteTask`). A launch
 * that fails is offered to another host, or ends as `lost`.
 */
import { createHash } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CairnError, encodeTask, type TaskPayload } from '@cairn/core';
import type { JobRequest } from '@cairn/runner/executor';
import { kill } from './cancel.js';
import type { ExecResult } from './connection.js';
import { codeMismatch, type CodeBundle } from './deploy.js';
import type { Fleet } from './fleet.js';
import { linkFor } from './host-worker.js';
import { shScript } from './quote.js';
import { CODE_MISMATCH_EXIT, JOB_BUSY_EXIT, LAUNCH_SCRIPT, WRAPPER_SCRIPT } from './remote-script.js';
import { uploadDir } from './staging.js';
import type { HostState, Job } from './state.js';

/** The dir name of a job (or of a dependency's staged copy): readable, and unique by a hash of the key. */
export function jobDirName(jobKey: string): string {
  const safe = jobKey.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 80);
  return `${safe}-${createHash('sha256').update(jobKey).digest('hex').slice(0, 10)}`;
}

/** The bundle of the worker entry a detached job runs (`worker-entry.mjs`). */
export function entryBundle(f: Fleet): Promise<CodeBundle> {
  return f.bundler.bundle(pathToFileURL(f.workerEntry).href, 'worker-entry.mjs');
}

/** Starts a job as its own detached process group (`setsid`); its pid is the group's. */
export async function launchDetached(f: Fleet, j: Job, h: HostState): Promise<void> {
  const req = j.request as JobRequest;
  const jobDir = j.info.jobDir as string;
  try {
    const stepBundle = j.stepBundle as CodeBundle;
    const entry = await entryBundle(f);
    let r: ExecResult | undefined;
    let task: TaskPayload | undefined;
    // The launch checks both bundles by content before it starts anything: a mismatch (a file
    // replaced since it was uploaded) is uploaded again, once; it never runs.
    for (let attempt = 1; ; attempt++) {
      const [stepPath, entryPath] = await Promise.all([f.uploader.ensure(h.conn, h.workDir, stepBundle), f.uploader.ensure(h.conn, h.workDir, entry)]);
      task ??= await remoteTask(f, j, h, req.task, jobDir, stepPath);
      const cuda = j.info.gpuIndices.join(',');
      const graces = [f.opts.orphanGraceMs, f.opts.cancelGraceMs].map((ms) => String(Math.max(1, Math.ceil(ms / 1000))));
      r = await h.conn.exec(shScript(LAUNCH_SCRIPT, [jobDir, WRAPPER_SCRIPT, stepPath, stepBundle.sha256, entry.sha256, h.nodePath, entryPath, cuda, ...graces]), { stdin: encodeTask(task), timeoutMs: f.opts.hostTimeoutMs });
      if (r.code !== CODE_MISMATCH_EXIT) break;
      f.uploader.forget(h.conn, h.workDir, stepBundle);
      f.uploader.forget(h.conn, h.workDir, entry);
      if (attempt >= 2) throw codeMismatch(h.conn, h.workDir, j.info.step, r.stderr);
      f.logger.warn(`[${f.name}] SSH host "${h.options.name}": ${r.stderr.trim()} Uploading it again for "${j.info.step}".`);
    }
    if (r.code === JOB_BUSY_EXIT) {
      await alreadyRunning(f, j, h, r.stdout.toString('utf8').trim());
      return;
    }
    const pid = Number.parseInt(r.stdout.toString('utf8').trim(), 10);
    if (r.code !== 0 || !Number.isInteger(pid) || pid <= 0) {
      throw new CairnError('CAIRN_REMOTE', `SSH host "${h.options.name}": could not start step "${j.info.step}" in ${jobDir} (exit ${r.code}): ${r.stderr.trim()}`, { step: j.info.step, retryable: true });
    }
    j.info.pid = pid;
    await nowRunning(f, j, h);
  } catch (err) {
    launchFailed(f, j, h, err);
  }
}

/**
 * The launch found the job dir running a live copy (its lock held, or its process group alive):
 * a second copy never starts beside it. The same task (a previous run's, whose runner is gone)
 * is adopted: tracked as running, its heartbeat kept fresh, collected when it ends. Another task
 * fails the attempt with `CAIRN_REMOTE_BUSY` (not retried: a retry elsewhere would run it twice).
 */
async function alreadyRunning(f: Fleet, j: Job, h: HostState, answer: string): Promise<void> {
  const [kind, pidText] = answer.split(' ');
  const pid = Number.parseInt(pidText ?? '', 10);
  if (kind === 'same' && pid > 0) {
    f.logger.warn(`[${f.name}] SSH host "${h.options.name}": step "${j.info.step}" already runs in ${j.info.jobDir} (pid ${pid}, started by an earlier run with this very task): adopting it instead of starting a second copy.`);
    j.info.pid = pid;
    await nowRunning(f, j, h);
    return;
  }
  h.slots.release(j.demand, j.info.gpuIndices);
  j.info.gpuIndices = [];
  const who = pid > 0 ? `process group ${pid}` : 'a process that holds its lock';
  const error = new CairnError(
    'CAIRN_REMOTE_BUSY',
    `SSH host "${h.options.name}": the job dir ${j.info.jobDir} of step "${j.info.step}" already runs a different task (pid ${pid > 0 ? pid : '?'}, ${who}); a second copy is never started beside it. It stops when cancelled, or by itself once no runner has checked on it for orphanGraceMs (${f.opts.orphanGraceMs} ms). To stop it now: ssh ${h.options.user}@${h.options.host} kill -TERM -- -${pid > 0 ? pid : '<pid>'}; then run again.`,
    { step: j.info.step },
  );
  f.end(j, { state: 'failed', error, reason: error.message });
}

/**
 * Starts a step in the host's persistent worker: one line down the worker channel (no exec,
 * no SFTP for the task). The worker writes the job dir as the wrapper would; the handle's pid
 * is the worker's.
 */
export async function launchInWorker(f: Fleet, j: Job, h: HostState): Promise<void> {
  const req = j.request as JobRequest;
  const jobDir = j.info.jobDir as string;
  try {
    const stepBundle = j.stepBundle as CodeBundle;
    const [stepPath, link] = await Promise.all([f.uploader.ensure(h.conn, h.workDir, stepBundle), linkFor(f, h)]);
    const task = await remoteTask(f, j, h, req.task, jobDir, stepPath);
    const stage = !f.opts.sharedFs;
    // The worker checks the bundle against sha256 before the step runs (and refuses a mismatch).
    const sent = link.send({ t: 'run', dir: jobDir, step: j.info.step, task: Buffer.from(encodeTask(task)).toString('base64'), code: stepPath, sha256: stepBundle.sha256, cuda: j.info.gpuIndices.join(','), manifest: stage, orphanGraceMs: f.opts.orphanGraceMs, killGraceMs: f.opts.cancelGraceMs });
    if (!sent) throw new CairnError('CAIRN_REMOTE', `SSH host "${h.options.name}": the channel to the persistent worker closed before step "${j.info.step}" was sent.`, { step: j.info.step, retryable: true });
    j.info.pid = link.pid;
    j.info.workerDir = link.target.dir;
    j.link = link;
    await nowRunning(f, j, h);
  } catch (err) {
    launchFailed(f, j, h, err);
  }
}

/** A step is running on `h` (detached or in the worker): reported, and killed at once if cancelled meanwhile. */
async function nowRunning(f: Fleet, j: Job, h: HostState): Promise<void> {
  j.phase = 'running';
  j.runningSince = Date.now();
  h.downSince = undefined;
  f.report(j, { state: 'running' });
  if (j.cancelRequested) await kill(f, [j]);
}

/** A launch failed: another host may take the job; otherwise it is lost (an infrastructure failure the runner retries). */
function launchFailed(f: Fleet, j: Job, h: HostState, err: unknown): void {
  h.slots.release(j.demand, j.info.gpuIndices);
  j.info.gpuIndices = [];
  const unreachable = err instanceof CairnError && err.code === 'CAIRN_REMOTE' && err.retryable && !h.conn.connected;
  if (unreachable) h.downSince ??= Date.now();
  j.triedHosts.add(h.options.name);
  // Another host may take it; otherwise it is lost (an infrastructure failure the runner retries).
  if (!j.cancelRequested && f.hosts.some((o) => !o.conn.fatal && !j.triedHosts.has(o.options.name) && o.slots.canEverFit(j.demand))) {
    f.logger.warn(`[${f.name}] ${(err as Error).message} Trying another host for "${j.info.step}".`);
    j.phase = 'queued';
    j.host = undefined;
    f.queue.unshift(j);
    f.pump();
    return;
  }
  f.end(j, j.cancelRequested ? { state: 'cancelled' } : { state: 'lost', infrastructure: true, reason: (err as Error).message, error: err });
}

/** The task as the host sees it: the uploaded bundle, remote output and dependency paths, assigned GPUs. */
async function remoteTask(f: Fleet, j: Job, h: HostState, task: TaskPayload, jobDir: string, stepPath: string): Promise<TaskPayload> {
  const resources = { ...task.resources, gpuIndices: j.info.gpuIndices };
  const ref = { module: pathToFileURL(stepPath).href, export: task.ref.export };
  if (f.opts.sharedFs) {
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
