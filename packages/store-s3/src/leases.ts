/**
 * Leases as objects, with the filesystem lease's JSON holder (`{outputPath}/.executor_status.lock`
 * holding worker_id, timestamp (epoch s), host, pid, processStartTime, runId, token):
 *
 * - create: `PUT If-None-Match: *` — one winner among any number of racers;
 * - refresh and takeover: `PUT If-Match: <the ETag read>` — of two takers of one stale lease,
 *   one wins and the other gets 412;
 * - release: only while the ETag is still ours — `DELETE If-Match` where the provider enforces
 *   it, else a `HEAD If-Match` check and then the delete;
 * - fence: `HEAD If-Match` — is the lease still ours, immediately before a commit.
 *
 * A held lease is known by its ETag (what conditions compare) and its holder's token (what a
 * reader compares).
 *
 * Liveness is judged by the lease object's age on the gateway, not by the holder's clock: a
 * refresh rewrites the object, so its `Last-Modified` is the gateway's time of the last refresh,
 * and the gateway's `Date` header on the same response is its time now. `read` reports the
 * lease's times in this host's clock (`timestamp` = now − age), so the runner's staleness rule
 * (`now - timestamp > staleMs`) compares the object's age on one clock with `staleMs`: a runner
 * whose clock runs ahead does not take live leases, and a dead holder whose clock ran ahead
 * (a timestamp in the future) is taken over once its lease is `staleMs` old. Such a timestamp is
 * a warning naming the lease. (Ages are in whole seconds, as the gateway reports them.)
 */
import type { LeaseHolder, LeaseInfo } from '@cairn/runner/store';
import type { S3Objects } from './objects.js';
import type { ProviderCapabilities } from './probe.js';
import { parseHolder } from './formats.js';

/** A lease this process holds. */
export interface HeldLease {
  /** Bucket. */
  readonly bucket: string;
  /** The lease object's key (`…/.executor_status.lock`). */
  readonly key: string;
  /** Unquoted ETag of the version we wrote. */
  readonly etag: string;
  /** The holder's token. */
  readonly token: string;
}

/** A lease as read, with the ETag a takeover must match. */
export interface ObservedLease extends LeaseInfo {
  /** Unquoted ETag of what was read. */
  readonly etag: string;
}

/** A holder timestamp this far ahead of the gateway's clock is worth a warning. */
const FUTURE_SLACK_MS = 5_000;

/** Lease operations over {@link S3Objects}. */
export class S3Leases {
  readonly #objects: S3Objects;
  readonly #caps: () => ProviderCapabilities;
  readonly #warn: (message: string) => void;
  /** Leases (key and ETag) already warned about, so a poll warns once. */
  readonly #warned = new Set<string>();

  /** `caps` is read at each call (the probe runs once, before the first run). */
  constructor(objects: S3Objects, caps: () => ProviderCapabilities, warn: (message: string) => void = () => undefined) {
    this.#objects = objects;
    this.#caps = caps;
    this.#warn = warn;
  }

  get #safe(): boolean {
    return this.#caps().conditionalWrites;
  }

  /** Creates the lease; null when one exists. */
  async create(bucket: string, key: string, holder: LeaseHolder): Promise<HeldLease | null> {
    const body = JSON.stringify(holder);
    let etag: string | null;
    if (this.#safe) etag = await this.#objects.createIfAbsent(bucket, key, body);
    else etag = (await this.#objects.head(bucket, key)) === null ? await this.#objects.put(bucket, key, body, 'application/json') : null; // unsafeNoLeases: racy
    return etag === null ? null : { bucket, key, etag, token: holder.token };
  }

  /**
   * Reads the lease; null when there is none. Its times are this host's clock minus the
   * object's age on the gateway (see the file's header); `raw` is what the holder wrote.
   */
  async read(bucket: string, key: string): Promise<ObservedLease | null> {
    const got = await this.#objects.get(bucket, key);
    if (got === null) return null;
    const now = Date.now();
    const raw = got.body.toString('utf8');
    const holder = parseHolder(raw);
    // Without a Date header the age falls back to this host's clock.
    const age = Math.max(0, (got.serverDate ?? now) - got.lastModified);
    const seen = now - age;
    if (holder === null) return { holder, raw, mtimeMs: seen, etag: got.etag };
    const ts = holder.timestamp < 1e11 ? holder.timestamp * 1000 : holder.timestamp;
    const ahead = ts - (got.serverDate ?? now);
    if (ahead > FUTURE_SLACK_MS && !this.#warned.has(`${key} ${got.etag}`)) {
      this.#warned.add(`${key} ${got.etag}`);
      this.#warn(`The lease s3://${bucket}/${key} (held by ${holder.worker_id}) has a timestamp ${Math.round(ahead / 1000)} s in the future: its holder's clock is wrong. It is judged by the lease object's age on the store instead (taken over once it is not refreshed for staleMs).`);
    }
    return { holder: { ...holder, timestamp: seen / 1000 }, raw, mtimeMs: seen, etag: got.etag };
  }

  /** Rewrites our lease with `holder` (a fresh timestamp) if it is still ours; null when it is not. */
  async refresh(lease: HeldLease, holder: LeaseHolder): Promise<HeldLease | null> {
    return this.#replace(lease.bucket, lease.key, lease.etag, holder);
  }

  /** Takes over a (stale) lease if it is still exactly what was read; null when another taker or the holder got there first. */
  async takeover(bucket: string, key: string, observedEtag: string, holder: LeaseHolder): Promise<HeldLease | null> {
    return this.#replace(bucket, key, observedEtag, holder);
  }

  async #replace(bucket: string, key: string, etag: string, holder: LeaseHolder): Promise<HeldLease | null> {
    const body = JSON.stringify(holder);
    const next = this.#safe ? await this.#objects.replaceIfMatch(bucket, key, body, etag) : await this.#objects.put(bucket, key, body, 'application/json');
    return next === null ? null : { bucket, key, etag: next, token: holder.token };
  }

  /** Fence: true while the lease object is still the version we wrote (one HEAD). */
  async isHeld(lease: HeldLease): Promise<boolean> {
    return (await this.#objects.head(lease.bucket, lease.key, lease.etag)) !== null;
  }

  /**
   * Deletes our lease if it is still ours; false (and nothing deleted) when another runner holds
   * it now. `checked`: the caller verified it is ours a moment ago (a fence just before a commit),
   * so a provider without conditional DELETE skips its own check.
   */
  async release(lease: HeldLease, checked = false): Promise<boolean> {
    const caps = this.#caps();
    if (caps.conditionalDelete) return this.#objects.deleteIfMatch(lease.bucket, lease.key, lease.etag);
    // Check, then delete: the window between them is one round trip, while a lease can only be
    // taken over after it went `staleMs` (90 s) without a refresh.
    if (!checked && !(await this.isHeld(lease))) return false;
    await this.#objects.delete(lease.bucket, lease.key);
    return true;
  }
}
