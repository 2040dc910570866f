/**
 * What the executor learns of running jobs: the tick (every `pollIntervalMs`, ONE batched status
 * command per host for its running jobs, down the host's shell when it is idle; worker steps,
 * whose completions arrive on their channel, only now and then), what each answer means for a
 * job (exited: collect it; gone or missing: lost, or cancelled), a host that does not answer for
 * `hostTimeoutMs` (lost, hosts.ts), and `poll`, which asks the hosts about any handles, tracked
 * or not.
 */
import { CairnError } from '@cairn/core';
import { decodeResult, rebuildError, type JobHandle, type JobStatus } from '@cairn/runner/executor';
import type { Fleet, HostState, Job, LogOffsets, SshJobInfo } from './model.js';
import { appendLogs, finish } from './finish.js';
import { runOnHost } from './host-shell.js';
import { loseHost } from './hosts.js';
import { shScript } from './quote.js';
import { parseStatus, STATUS_SCRIPT, type LogChunks, type RemoteJobState } from './remote-script.js';
import { promisify } from './sftp.js';

/** A worker step running longer than this is checked with the others, for its logs. */
const WORKER_LIVE_LOGS_AFTER_MS = 1000;

/** One round of status checks (the executor's interval), then placement of what is still queued. */
export function tick(f: Fleet): void {
  const now = Date.now();
  for (const h of f.hosts) {
    if (h.checking) continue;
    // A worker step's completion arrives on the worker channel while it is up: it needs no
    // poll for speed. It is still checked now and then (a third of hostTimeoutMs): a host whose
    // sshd stops taking new channels can keep an old one open, and its steps must then be lost
    // like any other on an unreachable host (so a check that includes one is an exec: a new
    // channel, never the shell's old one). One that runs for more than a second is checked
    // every interval for its logs (small steps, the worker's reason to be, never are).
    const due = now - h.workerCheckedAt >= Math.max(f.opts.pollIntervalMs, f.opts.hostTimeoutMs / 3);
    const long = (j: Job) => now - j.runningSince >= WORKER_LIVE_LOGS_AFTER_MS;
    const jobs = [...f.jobs.values()].filter((j) => j.host === h && j.phase === 'running' && (due || !j.link?.up || long(j)));
    if (jobs.length === 0) continue;
    if (jobs.some((j) => j.link?.up)) h.workerCheckedAt = now;
    void check(f, h, jobs);
  }
  if (f.queue.length > 0) f.pump();
}

/** The states of job dirs on `h`, in one command that also removes the dirs queued for cleanup. */
export async function statusOf(f: Fleet, h: HostState, jobDirs: readonly string[]): Promise<RemoteJobState[]> {
  return (await statusAndLogs(f, h, jobDirs, [], false)).states;
}

/**
 * {@link statusOf}, and for each job with offsets the bytes its logs gained past them (one
 * command: the status check is what carries a running step's logs to the runner, see
 * `takeLogs`). `newChannel`: an exec even when the host's shell is idle (see `tick`).
 */
async function statusAndLogs(f: Fleet, h: HostState, jobDirs: readonly string[], offsets: readonly (LogOffsets | undefined)[], newChannel: boolean): Promise<ReturnType<typeof parseStatus>> {
  const cleanup = h.cleanup.splice(0);
  const args = jobDirs.flatMap((d, i) => {
    const o = offsets[i];
    return o ? [d, String(o.stdout), String(o.stderr)] : [d, '-', '-'];
  });
  const command = shScript(STATUS_SCRIPT, [...cleanup, '--', ...args]);
  const r = await (newChannel ? h.conn.exec(command, { timeoutMs: f.opts.hostTimeoutMs }) : runOnHost(f, h, command, undefined, f.opts.hostTimeoutMs)).catch((err: unknown) => {
    h.cleanup.push(...cleanup);
    throw err;
  });
  if (r.code !== 0) throw new CairnError('CAIRN_REMOTE', `SSH host "${h.options.name}": the status check failed (exit ${r.code}): ${r.stderr.trim()}`, { retryable: true });
  return parseStatus(
    r.stdout.toString('utf8'),
    jobDirs.length,
    offsets.map((o) => o !== undefined),
  );
}

/**
 * Appends log bytes fetched by a status check to the job's local log files, in order (writes
 * are chained on `j.logs.writing`, which `finish` awaits before it copies the rest).
 */
function takeLogs(j: Job, chunks: LogChunks): void {
  const o = j.logs;
  o.stdout += chunks.stdout.length;
  o.stderr += chunks.stderr.length;
  if (chunks.stdout.length === 0 && chunks.stderr.length === 0) return;
  o.writing = o.writing.then(() => appendLogs(j, chunks.stdout, chunks.stderr)).catch(() => {});
}

/** ONE status command (down the host's shell, or an exec) for all of a host's running jobs. */
export async function check(f: Fleet, h: HostState, jobs: Job[]): Promise<void> {
  h.checking = true;
  try {
    // Each check carries the new bytes of the jobs' logs (a worker step whose `done` comes first
    // drops them: it is no longer running, and `finish` copies from the offsets).
    const { states, logs } = await statusAndLogs(
      f,
      h,
      jobs.map((j) => j.info.jobDir as string),
      jobs.map((j) => (j.phase === 'running' ? j.logs : undefined)),
      jobs.some((j) => j.runsIn === 'worker'),
    );
    h.downSince = undefined;
    states.forEach((s, i) => {
      const j = jobs[i] as Job;
      if (j.phase !== 'running') return;
      const chunks = logs[i];
      if (chunks) takeLogs(j, chunks);
      // Being killed: its wrapper may have written `exit` while the rest of its group is still
      // going; cancel.ts ends it once the whole group is gone.
      if (j.killing && (s.kind === 'exited' || s.kind === 'gone')) return;
      if (s.kind === 'exited') void finish(f, j, h, s.code);
      // A worker step goes down its channel before the worker makes its job dir: while the
      // channel is up, a missing dir means "not started yet" (the worker answers `done` or
      // `rejected` for every step it was sent), never "lost" (which would run it twice).
      else if (s.kind === 'missing' && j.runsIn === 'worker' && j.link?.up) return;
      else if (s.kind === 'gone' || s.kind === 'missing') {
        if (j.cancelRequested) f.end(j, { state: 'cancelled', exitCode: null });
        else if (j.runsIn === 'worker') {
          const error = workerLostError(j, h, s.kind);
          f.end(j, { state: 'lost', infrastructure: true, reason: error.message, error });
        } else f.end(j, { state: 'lost', infrastructure: true, reason: `job vanished on ${h.options.name} (killed or the host rebooted)` });
      }
    });
  } catch (err) {
    h.downSince ??= Date.now();
    if (Date.now() - h.downSince >= f.opts.hostTimeoutMs) loseHost(f, h, err as Error);
  } finally {
    h.checking = false;
  }
}

/** `Executor.poll`: the state of each handle, batched per host; also for handles this executor does not track. */
export async function poll(f: Fleet, handles: readonly JobHandle[]): Promise<Map<string, JobStatus>> {
  const out = new Map<string, JobStatus>();
  const byHost = new Map<HostState, JobHandle[]>();
  for (const hd of handles) {
    const tracked = f.jobs.get(hd.jobId);
    if (tracked && (tracked.phase === 'queued' || tracked.phase === 'launching')) {
      out.set(hd.jobId, { state: 'queued' });
      continue;
    }
    const h = f.hostOf(hd);
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
          f,
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

/** A worker step whose worker ended before it: says which step, which worker, and where its log is. */
function workerLostError(j: Job, h: HostState, kind: 'gone' | 'missing'): CairnError {
  const where = `the persistent worker on SSH host "${h.options.name}" (pid ${j.info.pid ?? '?'})`;
  const what = kind === 'gone' ? `Step "${j.info.step}" was running in ${where}, which ended before the step did` : `Step "${j.info.step}" was sent to ${where} but never started there (the worker ended, or the connection dropped before the step reached it)`;
  const cause = kind === 'gone' ? ' (killed, out of memory, or the host rebooted; see' : ' (see';
  return new CairnError(
    'CAIRN_REMOTE',
    `${what}${cause} ${j.info.workerDir ?? `${h.workDir}/workers`}/worker.log). The step is retried; a new worker starts on demand. To keep a step out of the worker, give it resources.hints.sshWorker: false.`,
    { step: j.info.step, retryable: true },
  );
}
