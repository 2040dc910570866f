/**
 * The status loop: one check per interval while any job is active (each check is ONE list
 * request for all of them), doubling the pause up to 30 s while checks fail, and back to the
 * interval once one works. Timers never keep the process alive.
 */

/** What the loop drives. */
export interface PollerHost {
  /** One status check of every active job; throws when the cluster could not be asked. */
  check(): Promise<void>;
  /** True when there is nothing to watch (the loop then sleeps until `kick`). */
  idle(): boolean;
  /** The first failure of a series. */
  failing(err: unknown): void;
  /** The first success after failures. */
  recovered(): void;
}

/** The loop's controls. */
export interface Poller {
  /** Checks after `ms` (default: the interval) unless a check is already due sooner. */
  kick(ms?: number): void;
  /** Stops the loop; resolves once a check in flight has finished. */
  stop(): Promise<void>;
  /** Lets a stopped loop run again. */
  resume(): void;
}

/** The longest pause while checks fail. */
const MAX_BACKOFF_MS = 30_000;

/** Creates the loop (idle until the first `kick`). */
export function createPoller(host: PollerHost, intervalMs: number): Poller {
  let timer: NodeJS.Timeout | undefined;
  let due = Number.POSITIVE_INFINITY;
  let running: Promise<void> | undefined;
  let stopped = false;
  let failing = false;
  let pause = intervalMs;

  const tick = async (): Promise<void> => {
    try {
      await host.check();
      if (failing) host.recovered();
      failing = false;
      pause = intervalMs;
    } catch (err) {
      if (!failing) host.failing(err);
      failing = true;
      pause = Math.min(pause * 2, MAX_BACKOFF_MS);
    }
  };

  const kick = (ms = pause): void => {
    if (stopped || host.idle()) return;
    if (running) return; // the check in flight schedules the next one
    const at = Date.now() + ms;
    if (timer !== undefined && due <= at) return;
    clearTimeout(timer);
    due = at;
    timer = setTimeout(() => {
      timer = undefined;
      due = Number.POSITIVE_INFINITY;
      running = tick().finally(() => {
        running = undefined;
        kick();
      });
    }, ms);
    timer.unref();
  };

  return {
    kick,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      timer = undefined;
      due = Number.POSITIVE_INFINITY;
      await running;
    },
    resume() {
      stopped = false;
    },
  };
}
