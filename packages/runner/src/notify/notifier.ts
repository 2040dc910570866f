/**
 * One run's notifier: turns the run's progress events into notifications (step failed, step
 * slow, run ended) and delivers each to the sinks that asked for it. Deliveries run beside the
 * run; `end()` sends the run-end notification and waits for every delivery still in flight,
 * each bounded by its sink's timeout. A sink that fails, errs or hangs is logged, never thrown.
 */
import { isCairnError } from '@cairn/core';
import type { RunnerEvent, StepEvent } from '../events.js';
import type { RunnerLogger } from '../run/run.js';
import { deliverToCommand } from './command-sink.js';
import { deliverToWebhook } from './webhook-sink.js';
import type { NotifyCounts, NotifyError, NotifyEvent, NotifyOptions, NotifySink } from './types.js';

const TIMEOUT_MS = 10_000;
const MESSAGE_MAX = 2000;

/** An error as a notification carries it: code and message, never a stack or a cause. */
export function notifyError(err: unknown): NotifyError {
  const message = (err instanceof Error ? err.message : String(err)).slice(0, MESSAGE_MAX);
  return isCairnError(err) ? { code: err.code, message } : { message };
}

/** What the notifier remembers of a running step. */
interface Running {
  attempt: number;
  logs: StepEvent['logs'];
  timer: NodeJS.Timeout | undefined;
}

export class Notifier {
  readonly #options: NotifyOptions;
  readonly #logger: RunnerLogger;
  readonly #targets: readonly string[];
  readonly #steps = new Map<string, Running>();
  readonly #inFlight = new Set<Promise<void>>();
  #runId = '';
  #prefix = '';
  #started = Date.now();
  #counts: Readonly<Partial<Record<string, number>>> = {};

  constructor(options: NotifyOptions, logger: RunnerLogger, targets: readonly string[]) {
    this.#options = options;
    this.#logger = logger;
    this.#targets = targets;
  }

  /** The run's progress listener. */
  readonly listener = (event: RunnerEvent): void => {
    if (event.type === 'run-started') {
      this.#runId = event.runId;
      this.#prefix = event.prefix;
      this.#started = event.time;
      return;
    }
    if (event.type === 'run-finished') {
      this.#counts = event.counts ?? {};
      return;
    }
    if (event.type !== 'step') return;
    const key = event.path;
    const known = this.#steps.get(key);
    if (event.state === 'running') {
      if (known?.timer !== undefined) clearTimeout(known.timer);
      const running: Running = { attempt: event.attempt ?? 1, logs: event.logs, timer: undefined };
      const threshold = this.#options.slowStepMs;
      if (threshold !== undefined) {
        running.timer = setTimeout(() => {
          running.timer = undefined;
          this.#send({ type: 'step-slow', runId: event.runId, prefix: this.#prefix, step: event.step, path: event.path, attempt: running.attempt, runningMs: Date.now() - event.time, thresholdMs: threshold, ...(running.logs ? { logs: running.logs } : {}), time: Date.now() });
        }, threshold);
        // A slow-step timer never keeps the process alive.
        running.timer.unref();
      }
      this.#steps.set(key, running);
      return;
    }
    if (known?.timer !== undefined) {
      clearTimeout(known.timer);
      known.timer = undefined;
    }
    if (event.state === 'failed') {
      const attempt = event.attempt ?? known?.attempt;
      const logs = event.logs ?? known?.logs;
      this.#send({ type: 'step-failed', runId: event.runId, prefix: this.#prefix, step: event.step, path: event.path, ...(attempt !== undefined ? { attempt } : {}), error: notifyError(event.error), ...(logs ? { logs } : {}), time: event.time });
    }
    if (event.state !== 'retrying' && event.state !== 'pending' && event.state !== 'waiting-lease') this.#steps.delete(key);
  };

  /** Sends the run-end notification (`error`: why the run rejected) and waits for every delivery in flight. */
  async end(runId: string, prefix: string, error: unknown): Promise<void> {
    for (const s of this.#steps.values()) if (s.timer !== undefined) clearTimeout(s.timer);
    this.#steps.clear();
    const c = this.#counts;
    const counts: NotifyCounts = { succeeded: c.succeeded ?? 0, cached: c.cached ?? 0, skipped: c.skipped ?? 0, failed: c.failed ?? 0, depFailed: c['dep-failed'] ?? 0, cancelled: c.cancelled ?? 0 };
    const cancelled = isCairnError(error) && error.code === 'CAIRN_CANCELLED';
    const outcome = error === undefined ? 'succeeded' : cancelled ? 'cancelled' : 'failed';
    this.#send({
      type: 'run-end',
      runId: this.#runId || runId,
      prefix: this.#prefix || prefix,
      outcome,
      counts,
      durationMs: Date.now() - this.#started,
      targets: this.#targets,
      ...(error !== undefined ? { error: notifyError(error) } : {}),
      time: Date.now(),
    });
    while (this.#inFlight.size > 0) await Promise.all([...this.#inFlight]);
  }

  #send(event: NotifyEvent): void {
    for (const sink of this.#options.sinks) {
      if (sink.on !== undefined && !sink.on.includes(event.type)) continue;
      const p = this.#deliver(sink, event).finally(() => this.#inFlight.delete(p));
      this.#inFlight.add(p);
    }
  }

  async #deliver(sink: NotifySink, event: NotifyEvent): Promise<void> {
    const timeoutMs = sink.timeoutMs ?? TIMEOUT_MS;
    try {
      const problem = sink.type === 'command' ? await deliverToCommand(sink, event, timeoutMs) : await deliverToWebhook(sink, event, timeoutMs);
      if (problem !== undefined) this.#logger.warn(`Notification "${event.type}" to ${describeSink(sink)} ${problem}. The run goes on.`);
    } catch (err) {
      this.#logger.warn(`Notification "${event.type}" to ${describeSink(sink)} failed: ${String(err)}. The run goes on.`);
    }
  }
}

/** A sink as a warning names it (a webhook by its host only: its path often holds a token). */
function describeSink(sink: NotifySink): string {
  if (sink.type === 'command') return `command ${typeof sink.command === 'string' ? JSON.stringify(sink.command) : JSON.stringify(sink.command[0])}`;
  let host = '?';
  try {
    host = new URL(sink.url).host;
  } catch {
    // Checked already.
  }
  return `webhook ${host}`;
}
