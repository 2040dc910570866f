/** How one event or plan becomes a journal line. */
import type { RunnerEvent } from '../events.js';
import type { JournalEvent, JournalPlan } from './entry.js';

/** Events as plain JSON data: a step's `error` flattened to `{ name, message, code }`. */
export function eventToJson(event: RunnerEvent): JournalEvent {
  if (event.type !== 'step' || event.error === undefined) return event as JournalEvent;
  const e = event.error as { name?: unknown; message?: unknown; code?: unknown } | null;
  const error =
    typeof e === 'object' && e !== null
      ? { name: String(e.name ?? 'Error'), message: String(e.message ?? ''), ...(typeof e.code === 'string' ? { code: e.code } : {}) }
      : { name: 'Error', message: String(event.error) };
  return { ...event, error } as JournalEvent;
}

/** Strings JSON writes as they are: no quote, backslash, control character or surrogate. */
const PLAIN = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/;

/** `s` as a JSON string. */
export function jsonString(s: string): string {
  return PLAIN.test(s) ? `"${s}"` : JSON.stringify(s);
}

/** The start of a step event's line up to its step's name, for the last run asked about (a run writes 10^5 of them: bench row warm-100k). */
let headRunId: string | undefined;
let head = '';
function stepHead(runId: string): string {
  if (runId !== headRunId) {
    head = `{"type":"step","runId":${jsonString(runId)},"step":`;
    headRunId = runId;
  }
  return head;
}

/** `,"state":"…"` of each state met so far (a handful). */
const stateFields = new Map<string, string>();
function stateField(state: string): string {
  let f = stateFields.get(state);
  if (f === undefined) stateFields.set(state, (f = `,"state":${jsonString(state)}`));
  return f;
}

/**
 * The journal line of `entry`, without its newline. The step events without an error or a
 * message (nearly all of a run's) are written field by field, which takes half the time of
 * `JSON.stringify` of the object (bench row "journal" of tools/bench/ui.bench.mjs); the same
 * JSON either way.
 */
export function journalText(entry: RunnerEvent | JournalPlan): string {
  if (entry.type !== 'step' || entry.error !== undefined || entry.message !== undefined) return JSON.stringify(entry.type === 'plan' ? entry : eventToJson(entry));
  let s = `${stepHead(entry.runId)}${jsonString(entry.step)},"path":${jsonString(entry.path)}${stateField(entry.state)}`;
  if (entry.attempt !== undefined) s += `,"attempt":${JSON.stringify(entry.attempt)}`;
  if (entry.logs !== undefined) s += `,"logs":{"stdout":${jsonString(entry.logs.stdout)},"stderr":${jsonString(entry.logs.stderr)}}`;
  return `${s},"time":${JSON.stringify(entry.time)}}`;
}
