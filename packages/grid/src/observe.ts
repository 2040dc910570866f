/**
 * One batched look at many steps: ONE status query for all their jobs, their files, and (only for
 * jobs the queue no longer lists whose files do not settle how they ended) one accounting query.
 */
import { existsSync } from 'node:fs';
import { decide, type Verdict } from './decide.js';
import type { ExitRecord } from './files.js';
import type { JobStatus } from './runner-api.js';
import type { GridScheduler, SchedulerJobInfo } from './scheduler.js';
import { statusOf } from './status.js';
import type { GridCounters } from './submission.js';
import { readExit, type Tracked } from './tracked.js';

interface Look {
  readonly job: Tracked;
  info: SchedulerJobInfo | undefined;
  readonly exit: ExitRecord | undefined;
  readonly begun: boolean;
  readonly graceExpired: boolean;
  verdict: Verdict;
}

const unique = (ids: Iterable<string>): string[] => [...new Set(ids)];

/** What one look found. */
export interface Observed {
  /** Status of each step (`undefined` = no conclusion yet). */
  readonly statuses: Map<Tracked, JobStatus | undefined>;
  /** Jobs the scheduler holds in an error state (`stuck`), to be deleted: they never leave it by themselves. */
  readonly stuck: string[];
  /** Jobs queued again after they ran (requeued), to be cancelled: their steps are retried as new attempts. */
  readonly requeued: string[];
}

/** Looks at steps; sets or clears each step's `waitingSince`. */
export async function observe(scheduler: GridScheduler, counters: GridCounters, jobs: readonly Tracked[], graceMs: number): Promise<Observed> {
  const out = new Map<Tracked, JobStatus | undefined>();
  if (jobs.length === 0) return { statuses: out, stuck: [], requeued: [] };
  counters.statusQueries++;
  const queue = await scheduler.query(unique(jobs.map((j) => j.id)));
  const now = Date.now();
  const looks = await Promise.all(
    jobs.map(async (job): Promise<Look> => {
      const info = queue.get(job.id);
      // A queued job has not started: its files cannot exist yet (saves two file reads per step).
      const queued = info?.class === 'queued';
      const exit = queued ? undefined : await readExit(job);
      const begun = queued ? false : existsSync(job.files.begin);
      const graceExpired = job.waitingSince !== undefined && now - job.waitingSince >= graceMs;
      const o = { info, exit, begun, graceExpired, cancelRequested: job.cancelRequested, packed: job.pack !== undefined, wasRunning: job.lastState === 'running' };
      return { job, info, exit, begun, graceExpired, verdict: decide(o) };
    }),
  );
  const unsettled = looks.filter((l) => l.info === undefined && l.verdict.kind === 'wait');
  if (unsettled.length > 0) {
    counters.accountingQueries++;
    const done = await scheduler.finished(unique(unsettled.map((l) => l.job.id)));
    for (const l of unsettled) {
      l.info = done.get(l.job.id);
      if (l.info === undefined) continue;
      const { job, info, exit, begun, graceExpired } = l;
      l.verdict = decide({ info, exit, begun, graceExpired, cancelRequested: job.cancelRequested, packed: job.pack !== undefined, wasRunning: job.lastState === 'running' });
    }
  }
  // The grace window starts when this look ends (an accounting lookup may have waited).
  const end = Date.now();
  await Promise.all(
    looks.map(async (l) => {
      const status = await statusOf(l.job, l.verdict, { label: scheduler.label, info: l.info, graceExpired: l.graceExpired });
      if (status === undefined) l.job.waitingSince ??= end;
      else l.job.waitingSince = undefined;
      out.set(l.job, status);
    }),
  );
  const stuck = unique(looks.filter((l) => l.info?.class === 'stuck' && l.verdict.kind === 'ended').map((l) => l.job.id));
  const requeued = unique(looks.filter((l) => l.info?.class === 'queued' && l.verdict.kind === 'ended').map((l) => l.job.id));
  return { statuses: out, stuck, requeued };
}
