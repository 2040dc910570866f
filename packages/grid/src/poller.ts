/**
 * The status-check loop: ONE check at a time for all of an executor's active jobs, soon after
 * anything happened (a submit, a cancel, an adoption, a change seen), then less and less often
 * while nothing changes (adaptive backoff). A failing check (the controller restarting) keeps
 * the jobs and backs off the same way.
 */

/** Status-polling schedule: starts fast, grows while nothing changes. */
export interface PollOptions {
  /** First interval after a submit or a change. @default 200 */
  readonly initialMs?: number;
  /** Upper bound; keep it well below the time the scheduler keeps finished jobs listed. @default 5000 */
  readonly maxMs?: number;
  /** Growth factor per quiet poll. @default 1.5 */
  readonly factor?: number;
}

/** What the loop drives. */
export interface PollTarget {
  /** One batched check; true when anything changed. */
  check(): Promise<boolean>;
  /** True when there is nothing to watch (the loop sleeps until the next kick). */
  idle(): boolean;
  /** A check failed (called once per failing stretch). */
  failing(err: unknown): void;
  /** Checks work again after failing. */
  recovered(): void;
}

/** A running loop. */
export interface Poller {
  /** Something happened: check soon. */
  kick(): void;
  /** Stops the loop (no timer stays behind). */
  stop(): void;
  /** Starts it again after `stop`. */
  resume(): void;
}

/** Creates the loop; it starts at the first {@link Poller.kick}. */
export function createPoller(target: PollTarget, options: PollOptions = {}): Poller {
  const initialMs = options.initialMs ?? 200;
  const maxMs = options.maxMs ?? 5000;
  const factor = options.factor ?? 1.5;
  let timer: NodeJS.Timeout | undefined;
  let nextAt = Infinity;
  let interval = initialMs;
  let polling = false;
  let again = false;
  let failing = false;
  let stopped = false;

  const schedule = (delay: number): void => {
    if (stopped || target.idle()) return;
    const at = Date.now() + delay;
    if (timer !== undefined && nextAt <= at) return; // an earlier check is already due
    if (timer !== undefined) clearTimeout(timer);
    nextAt = at;
    timer = setTimeout(() => void tick(), delay);
  };

  async function tick(): Promise<void> {
    timer = undefined;
    nextAt = Infinity;
    if (stopped || polling) return;
    polling = true;
    let changed = false;
    try {
      changed = await target.check();
      if (failing) target.recovered();
      failing = false;
    } catch (err) {
      if (!failing) target.failing(err);
      failing = true;
    } finally {
      polling = false;
    }
    interval = changed || again ? initialMs : Math.min(maxMs, Math.round(interval * factor));
    again = false;
    schedule(interval);
  }

  return {
    kick() {
      interval = initialMs;
      if (polling) again = true;
      else schedule(initialMs);
    },
    stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      nextAt = Infinity;
    },
    resume() {
      stopped = false;
    },
  };
}
