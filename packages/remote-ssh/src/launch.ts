/**
 * Starting a placed job on its host, one of two ways: detached (the launch script checks both
 * bundles by content, takes the job dir's lock, starts the wrapper under `setsid` and prints its
 * pid: the job's process group; a job dir that runs a live copy is adopted or refused, never run
 * twice) or in the host's persistent worker (one `run` line down its channel: no exec, no SFTP
 * for the task). Either way the task is rewritten for the host first (`remoteTask`). A command
 * step always runs detached, with no Node on the host (see command.ts). A launch
 * that fails is offered to another host, or ends as `lost`.
 */
import { createHash } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { mkdir, readdir } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CairnError, encodeTask, type TaskPayload } from '@cairn/core';
import { fetchJobDeps, secretsFileText, secretVars, type JobRequest } from '@cairn/runner/executor';
import { kill } from './cancel.js';
import type { ExecResult } from './connection.js';
import { prepareCommand } from './command.js';
import { bundlePath, codeMismatch, type CodeBundle } from './deploy.js';
import type { Fleet, HostState, Job } from './model.js';
import { runOnHost } from './host-shell.js';
import { linkFor } from './host-worker.js';
import { shScript } from './quote.js';
import { finish } from './finish.js';
import { CODE_MISMATCH_EXIT, COMMAND_LAUNCH_SCRIPT, launchInput, parseQuickExit, COMMAND_WRAPPER_SCRIPT, JOB_BUSY_EXIT, LAUNCH_SCRIPT, WRAPPER_SCRIPT } from './remote-script.js';
import { uploadDir } from './staging.js';

/** The dir name of a job (or of a dependency's staged copy): readable, and unique by a hash of the key. */
export function jobDirName(jobKey: string): string {
  const safe = jobKey.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 80);
  return `${safe}-${createHash('sha256').update(jobKey).digest('hex').slice(0, 10)}`;
}

/** The bundle of the worker entry a detached job runs (`worker-entry.mjs`). */
export function entryBundle(f: Fleet): Promise<CodeBundle> {
  return f.bundler.bundle(pathToFileURL(f.workerEntry).href, 'worker-entry.mjs');
}

/** What a detached launch sends its host: the code it verifies first, the launch script's arguments, the task on stdin. */
interface DetachedLaunch {
  readonly bundles: readonly CodeBundle[];
  readonly script: string;
  readonly args: readonly string[];
  readonly stdin: Uint8Array;
}

/** Starts a job as its own detached process group (`setsid`); its pid is the group's. */
export async function launchDetached(f: Fleet, j: Job, h: HostState): Promise<void> {
  const jobDir = j.info.jobDir as string;
  try {
    const launch = j.info.command ? await commandLaunch(f, j, h) : await nodeLaunch(f, j, h);
    let r: ExecResult | undefined;
    // The launch checks the code by content before it starts anything: a mismatch (a file
    // replaced since it was uploaded) is uploaded again, once; it never runs.
    for (let attempt = 1; ; attempt++) {
      await Promise.all(launch.bundles.map((b) => f.uploader.ensure(h.conn, h.workDir, b)));
      r = await runOnHost(f, h, shScript(launch.script, launch.args), launch.stdin, f.opts.hostTimeoutMs);
      if (r.code !== CODE_MISMATCH_EXIT) break;
      for (const b of launch.bundles) f.uploader.forget(h.conn, h.workDir, b);
      if (attempt >= 2) throw codeMismatch(h.conn, h.workDir, j.info.step, r.stderr);
      f.logger.warn(`[${f.name}] SSH host "${h.options.name}": ${r.stderr.trim()} Uploading it again for "${j.info.step}".`);
    }
    if (r.code === JOB_BUSY_EXIT) {
      await alreadyRunning(f, j, h, r.stdout.toString('utf8').trim());
      return;
    }
    const [pidLine = '', ...after] = r.stdout.toString('utf8').split('\n');
    const pid = Number.parseInt(pidLine.trim(), 10);
    if (r.code !== 0 || !Number.isInteger(pid) || pid <= 0) {
      throw new CairnError('CAIRN_REMOTE', `SSH host "${h.options.name}": could not start step "${j.info.step}" in ${jobDir} (exit ${r.code}): ${r.stderr.trim()}`, { step: j.info.step, retryable: true });
    }
    j.info.pid = pid;
    const quick = j.info.command ? parseQuickExit(after) : undefined;
    if (quick && !j.cancelRequested) {
      // It already ended: collected from what the launch printed (no status check, no reads).
      j.phase = 'running';
      j.runningSince = Date.now();
      h.downSince = undefined;
      f.report(j, { state: 'running' });
      await finish(f, j, h, quick.code, { result: quick.result, stdout: quick.stdout, stderr: quick.stderr, out: quick.outEmpty ? { dirs: [], files: [] } : undefined });
      return;
    }
    await nowRunning(f, j, h);
  } catch (err) {
    launchFailed(f, j, h, err);
  }
}

/** The secrets file a detached step's wrapper reads (empty when it needs none): over the launch's stdin, never an argument. */
function secretsOf(req: JobRequest): string {
  const vars = secretVars(req.task, req.secrets);
  return vars === undefined ? '' : secretsFileText(vars, req.task.name);
}

/** The wrapper's last three arguments: CUDA devices, orphan grace and kill grace (seconds). */
function wrapperTail(f: Fleet, j: Job): string[] {
  const graces = [f.opts.orphanGraceMs, f.opts.cancelGraceMs].map((ms) => String(Math.max(1, Math.ceil(ms / 1000))));
  return [j.info.gpuIndices.join(','), ...graces];
}

/** A step run by Node: the step bundle and the worker entry, the task as msgpack. */
async function nodeLaunch(f: Fleet, j: Job, h: HostState): Promise<DetachedLaunch> {
  const req = j.request as JobRequest;
  const jobDir = j.info.jobDir as string;
  const stepBundle = j.stepBundle as CodeBundle;
  const entry = await entryBundle(f);
  const [stepPath, entryPath] = [bundlePath(h.workDir, stepBundle), bundlePath(h.workDir, entry)];
  const task = await remoteTask(f, j, h, req.task, jobDir, stepPath);
  const args = [jobDir, WRAPPER_SCRIPT, stepPath, stepBundle.sha256, entry.sha256, h.nodePath, entryPath, ...wrapperTail(f, j)];
  return { bundles: [stepBundle, entry], script: LAUNCH_SCRIPT, args, stdin: launchInput(secretsOf(req), encodeTask(task)) };
}

/**
 * How long a command launch waits for the job to end (seconds, for `sleep`): at most one poll
 * interval (the status check would not see the end sooner) and 100 ms. A short step then ends
 * in its launch exec (command.bench.mjs, "ssh" row); a long one is only that much later to report.
 */
function quickWait(f: Fleet): string {
  return (Math.min(f.opts.pollIntervalMs, 100) / 1000).toFixed(3);
}

/** A command step (no Node on the host): its sources, verified by content, and `task.sh` (see command.ts). */
async function commandLaunch(f: Fleet, j: Job, h: HostState): Promise<DetachedLaunch> {
  const req = j.request as JobRequest;
  const jobDir = j.info.jobDir as string;
  // Dependencies on an object store are fetched here and uploaded like local ones: the host needs no credentials.
  const task = { ...req.task, depPaths: await fetchJobDeps(req.task.depPaths, req.storeAccess) };
  const { outputPath, depPaths } = await remotePaths(f, j, h, task, jobDir);
  const checkpointDir = await remoteCheckpoints(f, j, h, task, jobDir);
  const { sources, script } = await prepareCommand(task, { workDir: h.workDir, jobDir, outputPath, depPaths, gpuIndices: j.info.gpuIndices, checkpointDir });
  const verify = sources.flatMap((b) => [bundlePath(h.workDir, b), b.sha256]);
  const outDir = outputPath.startsWith('/') ? outputPath : '';
  const args = [jobDir, COMMAND_WRAPPER_SCRIPT, quickWait(f), outDir, ...verify, '--', '-', '-', ...wrapperTail(f, j)];
  return { bundles: sources, script: COMMAND_LAUNCH_SCRIPT, args, stdin: launchInput(secretsOf(req), Buffer.from(script)) };
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
    const sent = link.send({ t: 'run', dir: jobDir, step: j.info.step, task: Buffer.from(encodeTask(task)).toString('base64'), code: stepPath, sha256: stepBundle.sha256, cuda: j.info.gpuIndices.join(','), manifest: stage, orphanGraceMs: f.opts.orphanGraceMs, killGraceMs: f.opts.cancelGraceMs, ...(req.secrets === undefined ? {} : { secrets: req.secrets }) });
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

/**
 * The output and dependency paths as the host sees them: unchanged with `sharedFs`; otherwise
 * the output goes to `<jobDir>/out` (staged back when the job succeeds) and each dependency's
 * local output dir is uploaded to `<jobDir>/deps/`.
 */
async function remotePaths(f: Fleet, j: Job, h: HostState, task: TaskPayload, jobDir: string): Promise<{ outputPath: string; depPaths: Record<string, string> }> {
  if (f.opts.sharedFs) {
    j.info.remoteOutputPath = task.outputPath;
    return { outputPath: task.outputPath, depPaths: { ...task.depPaths } };
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
  return { outputPath, depPaths };
}

/**
 * The step's checkpoint directory as the host sees it (undefined when the store keeps none).
 * Reading `task.checkpointDir` opens the runner's (on the store, lease-fenced). With `sharedFs`
 * the host writes that very directory. Otherwise `<jobDir>/checkpoints` is filled from it before
 * the program starts (uploaded and verified as dependencies are) and copied back into it when the
 * attempt ends, whatever its end (finish.ts): the store keeps (or syncs, S3) the runner's copy.
 */
async function remoteCheckpoints(f: Fleet, j: Job, h: HostState, task: TaskPayload, jobDir: string): Promise<string | undefined> {
  const local = task.checkpointDir;
  if (local === undefined || f.opts.sharedFs) return local;
  const remote = `${jobDir}/checkpoints`;
  await mkdir(local, { recursive: true });
  // An empty one costs a command step no exec: its task.sh makes the directory (command.ts).
  if (j.info.command === undefined || (await readdir(local)).length > 0) await uploadDir(h.conn, local, remote);
  j.info.checkpoints = { local, remote };
  return remote;
}

/** The task as the host sees it: the uploaded bundle, remote output, dependency and checkpoint paths, assigned GPUs. */
async function remoteTask(f: Fleet, j: Job, h: HostState, task: TaskPayload, jobDir: string, stepPath: string): Promise<TaskPayload> {
  const resources = { ...task.resources, gpuIndices: j.info.gpuIndices };
  const ref = { module: pathToFileURL(stepPath).href, export: task.ref.export };
  const { outputPath, depPaths } = await remotePaths(f, j, h, task, jobDir);
  const checkpointDir = await remoteCheckpoints(f, j, h, task, jobDir);
  // The spread copies the runner's checkpointDir (a getter) as a plain value; a staged host's replaces it.
  const base = f.opts.sharedFs ? { ...task, ref, resources } : { ...task, ref, outputPath, depPaths, resources };
  return checkpointDir === undefined ? base : { ...base, checkpointDir };
}
