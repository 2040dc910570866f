/**
 * Delivers a notification to an HTTP(S) webhook: a JSON POST, retried after a network error, a
 * 5xx or a 429 with doubling back-off, all within the sink's timeout (each try gets what is left).
 */
import { slackMessage } from './slack.js';
import type { NotifyEvent, WebhookSink } from './types.js';

const RETRIES = 3;
const BACKOFF_MS = 500;

function retryable(status: number): boolean {
  return status >= 500 || status === 429;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** POSTs `event` to `sink.url`; resolves with a problem to log, or undefined when it was accepted (2xx). */
export async function deliverToWebhook(sink: WebhookSink, event: NotifyEvent, timeoutMs: number): Promise<string | undefined> {
  const deadline = Date.now() + timeoutMs;
  const body = JSON.stringify(sink.format === 'slack' ? slackMessage(event) : event);
  const retries = sink.retries ?? RETRIES;
  let wait = sink.backoffMs ?? BACKOFF_MS;
  let problem = 'was not tried';
  for (let attempt = 0; attempt <= retries; attempt++) {
    const left = deadline - Date.now();
    if (left <= 0) return `${problem}; gave up at the ${timeoutMs} ms timeout`;
    try {
      const res = await fetch(sink.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...sink.headers },
        body,
        signal: AbortSignal.timeout(left),
      });
      // Read the body so the connection is released.
      await res.arrayBuffer().catch(() => undefined);
      if (res.ok) return undefined;
      problem = `answered HTTP ${res.status}`;
      if (!retryable(res.status)) return problem;
    } catch (err) {
      const e = err as { name?: string; message?: string; cause?: { message?: string } };
      problem = e.name === 'TimeoutError' ? `did not answer within ${timeoutMs} ms` : `could not be reached (${e.cause?.message ?? e.message ?? String(err)})`;
    }
    if (attempt < retries) {
      if (Date.now() + wait >= deadline) return `${problem}; gave up at the ${timeoutMs} ms timeout`;
      await sleep(wait);
      wait *= 2;
    }
  }
  return `${problem} (after ${retries + 1} tries)`;
}
