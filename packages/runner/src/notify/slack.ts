/** The built-in formatter for Slack-compatible chat webhooks: one `{ text }` line per notification. */
import type { NotifyCounts, NotifyEvent } from './types.js';

function seconds(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 120 ? `${s}s` : s < 7200 ? `${Math.round(s / 60)}m` : `${(s / 3600).toFixed(1)}h`;
}

function countsLine(c: NotifyCounts): string {
  const parts = [`${c.succeeded} built`, `${c.cached} cached`];
  if (c.skipped > 0) parts.push(`${c.skipped} built elsewhere`);
  if (c.failed > 0) parts.push(`${c.failed} failed`);
  if (c.depFailed > 0) parts.push(`${c.depFailed} not run (dependency failed)`);
  if (c.cancelled > 0) parts.push(`${c.cancelled} cancelled`);
  return parts.join(', ');
}

/** The chat message of `event`: `{ text }`. */
export function slackMessage(event: NotifyEvent): { text: string } {
  switch (event.type) {
    case 'run-end': {
      const mark = event.outcome === 'succeeded' ? ':white_check_mark:' : event.outcome === 'cancelled' ? ':warning:' : ':x:';
      const targets = event.targets.length === 0 ? '' : ` (${event.targets.slice(0, 5).join(', ')}${event.targets.length > 5 ? ', …' : ''})`;
      const why = event.error === undefined ? '' : `\n${event.error.message.split('\n')[0]}`;
      return { text: `${mark} Cairn run ${event.runId} ${event.outcome}${targets} in ${seconds(event.durationMs)}: ${countsLine(event.counts)}.${why}` };
    }
    case 'step-failed': {
      const attempt = event.attempt === undefined ? '' : ` (attempt ${event.attempt})`;
      const code = event.error.code === undefined ? '' : `${event.error.code}: `;
      const logs = event.logs === undefined ? '' : `\nLogs: ${event.logs.stderr}`;
      return { text: `:x: Step ${event.step} failed${attempt} in run ${event.runId}: ${code}${event.error.message.split('\n')[0]}${logs}` };
    }
    case 'step-slow':
      return { text: `:hourglass: Step ${event.step} (attempt ${event.attempt}) has been running for ${seconds(event.runningMs)} in run ${event.runId}, past ${seconds(event.thresholdMs)}.` };
  }
}
