/**
 * Lease holders and staleness, whatever store keeps the lease. At most one runner works on a
 * step at a time, across processes and hosts sharing the store. A lease holds a
 * {@link LeaseHolder} (a superset of Marin's `{worker_id, timestamp}`), written whole before it
 * is published (a store never shows an empty lease). The holder refreshes it on one shared
 * timer; a lease not refreshed for `staleMs` may be taken over. On the holder's own host a dead
 * holder (its pid gone, or reused by a process with another start time) is recognised at once.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';

/** Marin's lock file inside a step's output directory: honoured (read) by Cairn, never written. */
export const MARIN_LOCK_FILE = '.executor_status.lock';

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
  /** Unique per run (a run holds at most one lease per step): how a holder recognises its own lease. */
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
  /** Where the lease is (a file or object name), for messages. */
  readonly location?: string;
  /** A store's version tag of what was read (an object store's ETag), compared on takeover. */
  readonly etag?: string;
}

/** Lease timing. */
export interface LeaseOptions {
  /** How often held leases are refreshed (one shared timer). @default 30_000 */
  readonly heartbeatMs?: number;
  /** A lease not refreshed for this long may be taken over. @default 90_000 */
  readonly staleMs?: number;
  /** How often a step waiting on another runner's lease re-checks it. @default 1_000 */
  readonly pollMs?: number;
  /**
   * A lease whose content cannot be read (empty, garbage: a writer that died, or tampering) is
   * taken over, with a warning naming it, once it is this old. @default 5_000
   */
  readonly unreadableGraceMs?: number;
}

/** Lease timing with every default applied. */
export interface LeaseTiming {
  readonly heartbeatMs: number;
  readonly staleMs: number;
  readonly pollMs: number;
  readonly unreadableGraceMs: number;
}

/** {@link LeaseOptions} with the defaults filled in. */
export function leaseTiming(o: LeaseOptions = {}): LeaseTiming {
  return { heartbeatMs: o.heartbeatMs ?? 30_000, staleMs: o.staleMs ?? 90_000, pollMs: o.pollMs ?? 1_000, unreadableGraceMs: o.unreadableGraceMs ?? 5_000 };
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
/**
 * The lease holder of a run: one per run, shared by all its leases (a run holds at most one
 * lease per step, so its token tells its leases from any other run's). `timestamp` is set to
 * the time of each write.
 */
export function makeHolder(runId: string, now = Date.now()): LeaseHolder {
  return {
    worker_id: `${HOST}-${process.pid}-${runId}`,
    timestamp: now / 1000,
    host: HOST,
    pid: process.pid,
    processStartTime: SELF_START,
    runId,
    token: `${runId}.${process.pid}`,
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
 * Whether a lease may be taken over: not refreshed for `staleMs`, held by a process on this
 * host that is no longer alive (pid gone, or a different process start time), or unreadable
 * and older than `unreadableGraceMs` (default: `staleMs`).
 */
export function isStale(info: LeaseInfo, staleMs: number, now = Date.now(), unreadableGraceMs = staleMs): boolean {
  const h = info.holder;
  if (h === null) return now - info.mtimeMs > unreadableGraceMs;
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
