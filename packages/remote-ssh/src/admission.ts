/**
 * Placement of queued jobs on hosts: FIFO with backfill, each job on the usable host with the
 * largest free share that it fits and has not failed on (its GPUs taken by index). A host that
 * went down is tried again first, respecting its connection's backoff. With no usable host for
 * `hostTimeoutMs`, queued jobs end as `lost` instead of waiting forever.
 */
import { CairnError } from '@cairn/core';
import type { Fleet, Job } from './model.js';
import { ready, usable } from './hosts.js';
import { launchDetached, launchInWorker } from './launch.js';

/** Places queued jobs that fit (FIFO with backfill). Returns the launches started. */
export function pump(f: Fleet): Map<Job, Promise<void>> {
  const started = new Map<Job, Promise<void>>();
  for (const h of f.hosts) {
    // A host that failed is retried (respecting the connection's backoff) before use.
    if (h.downSince !== undefined && !h.conn.fatal && !h.checking && f.queue.length > 0) {
      ready(h, f.opts.hostTimeoutMs).then(
        () => {
          h.downSince = undefined;
          pump(f);
        },
        () => {},
      );
    }
  }
  for (let i = 0; i < f.queue.length; ) {
    const j = f.queue[i] as Job;
    const candidates = f.hosts.filter((h) => usable(h) && !j.triedHosts.has(h.options.name) && h.slots.fits(j.demand));
    if (candidates.length === 0) {
      i++;
      continue;
    }
    const h = candidates.reduce((a, b) => (b.slots.freeShare > a.slots.freeShare ? b : a));
    f.queue.splice(i, 1);
    const gpus = h.slots.take(j.demand);
    j.host = h;
    j.phase = 'launching';
    j.info.gpuIndices = gpus;
    j.info.host = h.options.name;
    j.info.jobDir = `${h.workDir}/jobs/${j.info.jobDirName}`;
    started.set(j, j.runsIn === 'worker' ? launchInWorker(f, j, h) : launchDetached(f, j, h));
  }
  if (f.queue.length > 0) checkAllDown(f);
  return started;
}

/**
 * With no usable host, queued jobs would wait forever: once every host has been unreachable
 * for `hostTimeoutMs` (or refused us for good), they end as `lost` (an infrastructure failure
 * the runner retries a bounded number of times, then reports).
 */
function checkAllDown(f: Fleet): void {
  if (f.hosts.some((h) => usable(h))) return;
  const now = Date.now();
  const timeout = f.opts.hostTimeoutMs;
  let wait = 0;
  for (const h of f.hosts) {
    if (h.conn.fatal) continue;
    const left = (h.downSince ?? now) + timeout - now;
    if (left > wait) wait = left;
  }
  if (wait <= 0) {
    const names = f.hosts.map((h) => `${h.options.name} (${h.options.host}:${h.options.port ?? 22})`).join(', ');
    const err = new CairnError('CAIRN_REMOTE', `No SSH host is reachable: ${names} did not answer for ${timeout} ms. Check the hosts and their sshd, or add another host.`, { retryable: true });
    for (const j of f.queue.splice(0)) f.end(j, { state: 'lost', infrastructure: true, reason: err.message, error: err });
    return;
  }
  if (f.downTimer) return;
  f.downTimer = setTimeout(() => {
    f.downTimer = undefined;
    if (f.queue.length > 0) pump(f);
  }, wait + 10);
  f.downTimer.unref();
}
