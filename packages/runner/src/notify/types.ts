/**
 * Notifications (types only): what a run tells people when it ends, when a step fails and when
 * a step runs longer than a threshold, and where it tells them (a command or a webhook).
 */

/** What a notification is about. */
export type NotifyEventType =
  /** The run ended (succeeded, failed or cancelled), with its counts, duration and targets. */
  | 'run-end'
  /** A step failed after its retries (dependents that did not run are counted at run end, not notified one by one). */
  | 'step-failed'
  /** A step's attempt has been running longer than `slowStepMs` (once per attempt). */
  | 'step-slow';

/** Steps by how they ended, as a notification counts them (every key present). */
export interface NotifyCounts {
  /** Ran in this run and succeeded. */
  readonly succeeded: number;
  /** Already built: served from the store. */
  readonly cached: number;
  /** Built by another runner while this one waited. */
  readonly skipped: number;
  /** Failed after their retries. */
  readonly failed: number;
  /** Did not run because a dependency failed. */
  readonly depFailed: number;
  /** Stopped or never started because the run was cancelled. */
  readonly cancelled: number;
}

/** An error as a notification carries it: its code and message only (no stack, no cause). */
export interface NotifyError {
  /** The `CAIRN_*` code, when the error has one. */
  readonly code?: string;
  /** The message (cut to 2,000 characters). */
  readonly message: string;
}

/** Fields every notification has. */
interface NoticeBase {
  /** The run. */
  readonly runId: string;
  /** The store prefix of the run. */
  readonly prefix: string;
  /** Epoch milliseconds. */
  readonly time: number;
}

/** The run ended. */
export interface RunEndNotice extends NoticeBase {
  /** Kind. */
  readonly type: 'run-end';
  /** How it ended: `failed` when a step failed or the run could not start, `cancelled` when it was stopped. */
  readonly outcome: 'succeeded' | 'failed' | 'cancelled';
  /** Steps by how they ended. */
  readonly counts: NotifyCounts;
  /** Wall time of the run, in milliseconds. */
  readonly durationMs: number;
  /** Names of the steps the run was asked for (their upstream steps are not listed). */
  readonly targets: readonly string[];
  /** Why the run did not succeed (`outcome` other than `succeeded`). */
  readonly error?: NotifyError;
}

/** A step failed (after its retries). */
export interface StepFailedNotice extends NoticeBase {
  /** Kind. */
  readonly type: 'step-failed';
  /** Step name. */
  readonly step: string;
  /** The step's output path (`cairn logs <step>` shows its logs once the failure is recorded there). */
  readonly path: string;
  /** The attempt that failed last (1-based), when one ran. */
  readonly attempt?: number;
  /** What failed. */
  readonly error: NotifyError;
  /** The failed attempt's log files, as written while it ran. */
  readonly logs?: { readonly stdout: string; readonly stderr: string };
}

/** A step's attempt is still running past the threshold. */
export interface StepSlowNotice extends NoticeBase {
  /** Kind. */
  readonly type: 'step-slow';
  /** Step name. */
  readonly step: string;
  /** The step's output path. */
  readonly path: string;
  /** The attempt (1-based). */
  readonly attempt: number;
  /** How long it has run, in milliseconds. */
  readonly runningMs: number;
  /** The threshold it passed (`slowStepMs`). */
  readonly thresholdMs: number;
  /** Where its output is appearing. */
  readonly logs?: { readonly stdout: string; readonly stderr: string };
}

/** Any notification: the JSON a command reads on stdin and a `json` webhook receives. */
export type NotifyEvent = RunEndNotice | StepFailedNotice | StepSlowNotice;

/** Fields every sink has. */
interface SinkBase {
  /** The notifications this sink receives. @default all: ['run-end', 'step-failed', 'step-slow'] */
  readonly on?: readonly NotifyEventType[];
  /** The most one notification may take, retries included; then it is given up (and a command killed), logged, and the run goes on. @default 10000 */
  readonly timeoutMs?: number;
}

/** A program that receives each notification as JSON on its stdin. */
export interface CommandSink extends SinkBase {
  /** Kind. */
  readonly type: 'command';
  /**
   * The program and its arguments (`['notify-send-json', '--urgent']`), run without a shell; or
   * one string, run with `/bin/sh -c`. Its exit status other than 0 is logged as a warning.
   */
  readonly command: string | readonly string[];
}

/** An HTTP(S) endpoint that receives each notification as a JSON POST. */
export interface WebhookSink extends SinkBase {
  /** Kind. */
  readonly type: 'webhook';
  /** The endpoint: an `http:` or `https:` URL (anything else is refused with `CAIRN_NOTIFY_URL`). */
  readonly url: string;
  /** The body: `'json'`, the notification itself, or `'slack'`, `{ "text": "…" }` for Slack-compatible chat webhooks. @default 'json' */
  readonly format?: 'json' | 'slack';
  /** Extra request headers (an `Authorization` header, say). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Further tries after a network error, a 5xx or a 429, with doubling back-off. @default 3 */
  readonly retries?: number;
  /** The wait before the first retry (doubled for each next one), in milliseconds. @default 500 */
  readonly backoffMs?: number;
}

/** Where notifications go. */
export type NotifySink = CommandSink | WebhookSink;

/** The runner's `notify` option (and `cairn.config.ts`'s `notify`). */
export interface NotifyOptions {
  /** Where notifications go; each receives the events its `on` lists. */
  readonly sinks: readonly NotifySink[];
  /** Notify once per attempt that runs longer than this many milliseconds. @default none: no `step-slow` notifications */
  readonly slowStepMs?: number;
}
