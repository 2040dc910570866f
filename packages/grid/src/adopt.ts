/**
 * Adoption lookups. A restarted runner adopts its steps one call at a time; lookups made within
 * a few milliseconds of each other share ONE status query (and at most one accounting query),
 * so adopting a thousand packed steps costs a couple of scheduler calls, not a thousand.
 */
import { existsSync } from 'node:fs';
import type { GridScheduler } from './scheduler.js';
import type { GridCounters } from './submission.js';
import type { Tracked } from './tracked.js';

/** How long lookups wait for company. */
const WINDOW_MS = 20;

/** Answers "does the scheduler (or the step's own files) still know this job?". */
export interface Adopter {
  /** True when the job is queued, running, finished with an exit-code file, or in accounting. */
  exists(job: Tracked): Promise<boolean>;
}

interface Lookup {
  readonly job: Tracked;
  resolve(found: boolean): void;
  reject(err: unknown): void;
}

/** Creates the coalescing lookup. */
export function createAdopter(scheduler: GridScheduler, counters: GridCounters): Adopter {
  let batch: Lookup[] = [];
  let timer: NodeJS.Timeout | undefined;
  const run = async (lookups: Lookup[]): Promise<void> => {
    try {
      counters.statusQueries++;
      const queue = await scheduler.query([...new Set(lookups.map((l) => l.job.id))]);
      const missing = lookups.filter((l) => !queue.has(l.job.id) && !existsSync(l.job.files.exit));
      const done = missing.length > 0 ? (counters.accountingQueries++, await scheduler.finished([...new Set(missing.map((l) => l.job.id))])) : new Map();
      for (const l of lookups) l.resolve(queue.has(l.job.id) || existsSync(l.job.files.exit) || done.has(l.job.id));
    } catch (err) {
      for (const l of lookups) l.reject(err);
    }
  };
  return {
    exists(job) {
      return new Promise((resolve, reject) => {
        batch.push({ job, resolve, reject });
        if (timer !== undefined) return;
        timer = setTimeout(() => {
          timer = undefined;
          const lookups = batch;
          batch = [];
          void run(lookups);
        }, WINDOW_MS);
      });
    },
  };
}
