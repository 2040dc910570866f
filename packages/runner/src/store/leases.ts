/**
 * Leases: at most one runner works on a step at a time, across processes on one host and
 * hosts sharing a filesystem. A lease is the file `{outputPath}/.executor_status.lock`,
 * created atomically (O_EXCL) and holding a {@link LeaseHolder} (a superset of Marin's
 * `{worker_id, timestamp}`). The holder refreshes it on one shared timer; a lease not
 * refreshed for `staleMs` may be taken over. On the holder's own host a dead holder (its pid
 * gone, or reused by a process with another start time) is recognised at once.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';

/** File name of the lease inside a step's output directory. */
export const LEASE_FILE = '.executor_status.lock';

/** Who holds a lease. */
export interface LeaseHolder {
  /** Marin-compatible holder id: `host-pid-runId`. */
  worker_id: string;
  /** Marin-compatible last refresh, epoch **seconds** (float). */
  timestamp: number;
  /** Host name of the holder. */
  host: string;
  /** Process id of the holder. */
  pid: number;
  /** Start time of the holder's process (Linux clock ticks since boot, from /proc), or null. */
  processStartTime: number | null;
  /** The holder's run id. */
  runId: string;
  /** Unique per run, and per acquisition outside a run's synchronous path: how a holder recognises its own lease. */
  token: string;
}

/** A lease as read from the store. */
export interface LeaseInfo {
  /** The holder, or null when the file is unreadable (being written, or foreign). */
  readonly holder: LeaseHolder | null;
  /** The raw text (compared on takeover). */
  readonly raw: string;
  /** Last modification, epoch ms (age of an unreadable lease). */
  readonly mtimeMs: number;
}

/** Lease timing. */
export interface LeaseOptions {
  /** How often held leases are refreshed (one shared timer). @default 30_000 */
  readonly heartbeatMs?: number;
  /** A lease not refreshed for this long may be taken over. @default 90_000 */
  readonly staleMs?: number;
  /** How often a step waiting on another runner's lease re-checks it. @default 1_000 */
  readonly pollMs?: number;
}

const HOST = hostname();

/** This machine's host name. */
export function thisHost(): string {
  return HOST;
}

/** Start time of a process (field 22 of /proc/<pid>/stat), or null where unknown. */
export function processStartTime(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const v = Number(fields[19]);
    return Number.isFinite(v) ? v : null;
  } catch {
    return null;
  }
}

const SELF_START = processStartTime(process.pid);
let counter = 0;

let lastRunId = '';
let lastWorkerId = '';

/** A fresh holder for this process and run (`now`: epoch ms, when the caller already has it). */
export function makeHolder(runId: string, now = Date.now()): LeaseHolder {
  if (runId !== lastRunId) {
    lastRunId = runId;
    lastWorkerId = `${HOST}-${process.pid}-${runId}`;
  }
  return {
    worker_id: lastWorkerId,
    timestamp: now / 1000,
    host: HOST,
    pid: process.pid,
    processStartTime: SELF_START,
    runId,
    token: `${runId}.${++counter}`,
  };
}

/** Parses lease text; null when it is not a holder object. */
export function parseHolder(raw: string): LeaseHolder | null {
  try {
    const v = JSON.parse(raw) as Partial<LeaseHolder> | null;
    if (typeof v !== 'object' || v === null || typeof v.timestamp !== 'number') return null;
    return v as LeaseHolder;
  } catch {
    return null;
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether a lease may be taken over: not refreshed for `staleMs`, or held by a process on
 * this host that is no longer alive (pid gone, or a different process start time).
 */
export function isStale(info: LeaseInfo, staleMs: number, now = Date.now()): boolean {
  const h = info.holder;
  if (h === null) return now - info.mtimeMs > staleMs;
  // Marin writes epoch seconds; tolerate milliseconds too.
  const ts = h.timestamp < 1e11 ? h.timestamp * 1000 : h.timestamp;
  if (now - ts > staleMs) return true;
  if (h.host === HOST && typeof h.pid === 'number') {
    if (h.pid === process.pid) return h.processStartTime !== null && SELF_START !== null && h.processStartTime !== SELF_START;
    if (!pidAlive(h.pid)) return true;
    if (typeof h.processStartTime === 'number') {
      const start = processStartTime(h.pid);
      if (start !== null && start !== h.processStartTime) return true;
    }
  }
  return false;
}
