/**
 * Lease holders and staleness, whatever store keeps the lease. At most one runner works on a
 * step at a time, across processes and hosts sharing the store. A lease holds a
 * {@link LeaseHolder} (a superset of Marin's `{worker_id, timestamp}`), written whole before it
 * is published (a store never shows an empty lease). The holder refreshes it on one shared
 * timer; a lease not refreshed for `staleMs` may be taken over. On the holder's own host and in
 * its own PID namespace a dead holder (its pid gone, or reused by a process with another start
 * time) is recognised at once.
 *
 * Clocks: a lease's age is judged on the store's clock where the store can tell it
 * ({@link LeaseInfo.ageMs}: the local store compares the lease file's mtime with a file it has just
 * written), so runners whose clocks disagree do not take over each other's live leases. The
 * holder's own timestamp is used only by stores that cannot tell an age; one in the future is
 * reported ({@link LeaseVerdict.aheadMs}) and the lease judged by its age.
 */
import { readFileSync, readlinkSync } from 'node:fs';
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
  /**
   * The holder's PID namespace (`pid:[inode]`, from `/proc/self/ns/pid`), or null where unknown.
   * Its pid is checked only by runners on the same host in the same namespace; absent in leases
   * written before it was recorded (those are judged by age only).
   */
  pidNs?: string | null;
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
  /**
   * How long ago the lease was last written, on the store's own clock (its "now" minus the
   * lease's modification time), when the store can tell: staleness is judged by it, whatever
   * the holder's or the reader's clock says. Absent: judged by the holder's timestamp.
   */
  readonly ageMs?: number;
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

/**
 * This process's PID namespace (`pid:[inode]`), or null when it cannot be proven: no /proc, or a
 * /proc mounted for another namespace (its `self` is not our pid), where pids read there are not ours.
 */
export function pidNamespace(): string | null {
  try {
    if (readlinkSync('/proc/self') !== String(process.pid)) return null;
    return readlinkSync('/proc/self/ns/pid');
  } catch {
    return null;
  }
}

const SELF_START = processStartTime(process.pid);
const SELF_NS = pidNamespace();
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
    pidNs: SELF_NS,
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

/** A holder's timestamp this far ahead of the store's clock (or the reader's) is reported as in the future. */
export const FUTURE_SLACK_MS = 2_000;

/** What a reader makes of a lease. */
export interface LeaseVerdict {
  /** Whether it may be taken over. */
  readonly stale: boolean;
  /**
   * Why: `fresh` (written within `staleMs`), `old` (not rewritten for `staleMs`), `dead` (its
   * holder's process is gone: same host and PID namespace), `unreadable` (no holder in it).
   */
  readonly reason: 'fresh' | 'old' | 'dead' | 'unreadable';
  /** How far the holder's timestamp is ahead of the store's clock, in ms, when more than {@link FUTURE_SLACK_MS}; else 0. */
  readonly aheadMs: number;
}

/** The holder's timestamp in epoch ms (Marin writes seconds; milliseconds are tolerated). */
function timestampMs(h: LeaseHolder): number {
  return h.timestamp < 1e11 ? h.timestamp * 1000 : h.timestamp;
}

/**
 * Judges a lease. Its age is the store's ({@link LeaseInfo.ageMs}) where known, else the reader's
 * clock against the holder's timestamp, or against the file's time when that timestamp is in
 * the future. A holder on this host in this PID namespace whose process is gone (or whose pid
 * now belongs to a process with another start time) is dead at once; in another namespace, or
 * in a lease that does not name one, its pid says nothing and only the age counts.
 */
export function judgeLease(info: LeaseInfo, staleMs: number, now = Date.now(), unreadableGraceMs = staleMs): LeaseVerdict {
  const h = info.holder;
  const age = info.ageMs ?? now - info.mtimeMs;
  if (h === null) return { stale: age > unreadableGraceMs, reason: 'unreadable', aheadMs: 0 };
  const ts = timestampMs(h);
  const storeNow = info.ageMs === undefined ? now : info.mtimeMs + info.ageMs;
  const ahead = ts - storeNow > FUTURE_SLACK_MS ? ts - storeNow : 0;
  const old = info.ageMs !== undefined || ahead > 0 ? age > staleMs : now - ts > staleMs;
  if (old) return { stale: true, reason: 'old', aheadMs: ahead };
  if (h.host === HOST && typeof h.pid === 'number' && SELF_NS !== null && h.pidNs === SELF_NS && holderDead(h)) return { stale: true, reason: 'dead', aheadMs: ahead };
  return { stale: false, reason: 'fresh', aheadMs: ahead };
}

/** Whether the holder, on this host and in this PID namespace, is gone. */
function holderDead(h: LeaseHolder): boolean {
  if (h.pid === process.pid) return h.processStartTime !== null && SELF_START !== null && h.processStartTime !== SELF_START;
  if (!pidAlive(h.pid)) return true;
  if (typeof h.processStartTime === 'number') {
    const start = processStartTime(h.pid);
    if (start !== null && start !== h.processStartTime) return true;
  }
  return false;
}

/** Whether a lease may be taken over: {@link judgeLease}'s `stale`. */
export function isStale(info: LeaseInfo, staleMs: number, now = Date.now(), unreadableGraceMs = staleMs): boolean {
  return judgeLease(info, staleMs, now, unreadableGraceMs).stale;
}
