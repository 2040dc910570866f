/**
 * Cancelling jobs, batched per host: a queued job ends at once; a detached job's process group
 * gets TERM, then KILL after `cancelGraceMs` (by a killer left on the host, so the KILL does not
 * depend on this runner living that long); a worker step is cancelled through its worker, which
 * is itself killed when it has not recorded the end in time. A job that is launching kills
 * itself once started (launch.ts). Either way the job ends when its host says it has. Every
 * command goes through a connection of its own, retried (control.ts), never through the step's
 * channel or the shared connection `stop()` closes.
 */
import type { JobHandle } from '@cairn/runner/executor';
import { ControlSession, pidsIn, tracked } from './control.js';
import type { Fleet, HostState, Job } from './model.js';
import { ALIVE_SCRIPT, CANCEL_SCRIPT, SIGNAL_SCRIPT, WORKER_CANCEL_SCRIPT } from './remote-script.js';
import { check } from './status.js';
import type { WorkerLink } from './worker-link.js';

/** After a worker step's cancel grace, how long its worker has to record the end before it is killed. */
const WORKER_CANCEL_SLACK_MS = 5000;

/** `Executor.cancel`: marks the jobs cancelled and stops those already running. */
export async function cancel(f: Fleet, handles: readonly JobHandle[]): Promise<void> {
  const toKill: Job[] = [];
  for (const hd of handles) {
    const j = f.jobs.get(hd.jobId);
    if (!j) continue;
    j.cancelRequested = true;
    if (j.phase === 'queued') f.end(j, { state: 'cancelled' });
    else if (j.phase === 'running') toKill.push(j);
    // 'launching' kills itself once started; 'finishing' already ended.
  }
  await kill(f, toKill);
}

/** Stops jobs, batched per host: detached jobs by process group, worker steps through their worker. A job being stopped already is joined. */
export async function kill(f: Fleet, jobs: Job[]): Promise<void> {
  const inWorker = new Map<HostState, Job[]>();
  const waits: Promise<void>[] = [];
  for (const j of jobs) {
    if (j.killing) waits.push(j.killing);
    else if (!j.host || !j.info.pid) continue;
    else if (j.runsIn === 'worker') inWorker.set(j.host, [...(inWorker.get(j.host) ?? []), j]);
    else waits.push(killDetached(f, j.host, j));
  }
  await Promise.all([...waits, ...[...inWorker].map(([h, list]) => killInWorker(f, h, list))]);
}

/** Detached jobs to cancel on one host, gathered until the next turn of the event loop. */
interface Batch {
  readonly jobs: Job[];
  /** Settles once the TERM was sent (or could not be): what `stop()` waits for. */
  readonly armed: Deferred;
  /** Settles once the jobs' groups are gone and the jobs reported (or the cancel gave up). */
  readonly done: Deferred;
}

interface Deferred {
  readonly promise: Promise<void>;
  resolve(): void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

const batches = new WeakMap<HostState, Batch>();

/**
 * Queues a detached job's cancel on its host. The runner cancels each job by itself, all in one
 * turn on Ctrl-C: they go out as one command on one connection per host, not one SSH handshake
 * per job (which sshd's `MaxStartups` would throttle). Registered with `stop()` at once.
 */
function killDetached(f: Fleet, h: HostState, j: Job): Promise<void> {
  let b = batches.get(h);
  if (!b) {
    const batch: Batch = { jobs: [], armed: deferred(), done: deferred() };
    b = batch;
    batches.set(h, batch);
    void tracked(f, batch.armed.promise);
    setImmediate(() => {
      batches.delete(h);
      void killNow(f, h, batch);
    });
  }
  b.jobs.push(j);
  j.killing = b.done.promise;
  return b.done.promise;
}

/**
 * TERM to each job's process group and a killer left on the host for the KILL after the grace
 * (one command, on a connection of its own, retried); then waits for the groups to be gone and
 * reports the jobs: `cancelled` means no process of the job is left (the status checks leave a
 * job being killed alone).
 */
async function killNow(f: Fleet, h: HostState, b: Batch): Promise<void> {
  const list = b.jobs;
  const c = new ControlSession(f, h);
  const ticks = String(Math.max(1, Math.ceil(f.opts.cancelGraceMs / 100)));
  try {
    let alive: string[];
    try {
      alive = pidsIn(await c.run(CANCEL_SCRIPT, [ticks, ...list.map((j) => String(j.info.pid))]));
    } finally {
      b.armed.resolve();
    }
    const deadline = Date.now() + f.opts.cancelGraceMs + 2000;
    while (alive.length > 0 && Date.now() < deadline && !f.stopped) {
      await new Promise((r) => setTimeout(r, 100));
      alive = pidsIn(await c.run(ALIVE_SCRIPT, alive));
    }
    if (alive.length > 0 && !f.stopped) await c.run(SIGNAL_SCRIPT, ['KILL', ...alive]);
  } catch (err) {
    f.logger.warn(`[${f.name}] cancel on SSH host "${h.options.name}": ${(err as Error).message}`);
  } finally {
    c.close();
    // From here the status checks may end the jobs (see check in status.ts).
    for (const j of list) j.killing = undefined;
  }
  if (!h.checking && !f.stopped) await check(f, h, list).catch(() => {});
  b.done.resolve();
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
async function killInWorker(f: Fleet, h: HostState, list: Job[]): Promise<void> {
  const grace = f.opts.cancelGraceMs;
  // On the channel that sent the step when it is up (ordered after the `run`), else by exec.
  const byLink = new Map<WorkerLink, string[]>();
  const byExec: string[] = [];
  for (const j of list) {
    if (j.link?.up) byLink.set(j.link, [...(byLink.get(j.link) ?? []), j.info.jobDir as string]);
    else byExec.push(j.info.jobDir as string);
  }
  for (const [link, dirs] of byLink) if (!link.send({ t: 'cancel', dirs, graceMs: grace })) byExec.push(...dirs);
  const c = new ControlSession(f, h);
  try {
    if (byExec.length > 0) await tracked(f, c.run(WORKER_CANCEL_SCRIPT, [String(grace), ...byExec]));
  } catch (err) {
    f.logger.warn(`[${f.name}] cancel on SSH host "${h.options.name}": ${(err as Error).message}`);
    c.close();
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
  if (stuck.length === 0 || f.stopped) {
    c.close();
    return;
  }
  const pids = [...new Set(stuck.map((j) => String(j.info.pid)))];
  f.logger.warn(`[${f.name}] the persistent worker on SSH host "${h.options.name}" (pid ${pids.join(', ')}) did not stop ${stuck.map((j) => `"${j.info.step}"`).join(', ')} within ${grace + WORKER_CANCEL_SLACK_MS} ms: killing the worker; its other steps are retried.`);
  await c.run(SIGNAL_SCRIPT, ['KILL', ...pids]).catch(() => {});
  c.close();
  if (!h.checking) await check(f, h, stuck);
}
