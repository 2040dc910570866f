/**
 * The `.executor_status` file: one token, as in Marin, so Marin's reader understands it.
 */

/** A recorded step status. */
export type StatusToken =
  /** Finished; the output and its record are complete. The only status that counts as built. */
  | 'SUCCESS'
  /** The step failed (after its retries). Rerun by default (`forceRunFailed`). */
  | 'FAILED'
  /** Running (written by Marin; Cairn marks a running step with its lease file instead). */
  | 'RUNNING'
  /** A dependency failed, so the step did not run. */
  | 'DEP_FAILED'
  /** Cancelled while running (signal, Ctrl-C); a rerun resumes it. */
  | 'CANCELLED';

/** Every valid token. */
export const STATUS_TOKENS: ReadonlySet<string> = new Set(['SUCCESS', 'FAILED', 'RUNNING', 'DEP_FAILED', 'CANCELLED']);

/** File name of the status file inside a step's output directory. */
export const STATUS_FILE = '.executor_status';

/** The outcome of parsing a status file: a token, or `null` with the reason it is unusable. */
export type ParsedStatus = { readonly status: StatusToken; readonly problem?: undefined } | { readonly status: null; readonly problem: string };

/**
 * Parses status text like Marin's reader: one non-`{` line is the token; otherwise a legacy
 * JSON-lines event log (`{"status": …}` per line) gives its last status. Anything else is unusable.
 */
export function parseStatus(text: string): ParsedStatus {
  const trimmed = text.trim();
  if (trimmed === '') return { status: null, problem: 'the status file is empty (half-written?)' };
  if (!trimmed.includes('\n') && !trimmed.startsWith('{')) {
    return STATUS_TOKENS.has(trimmed) ? { status: trimmed as StatusToken } : { status: null, problem: `unknown status ${JSON.stringify(trimmed.slice(0, 40))}` };
  }
  let last: string | undefined;
  for (const line of trimmed.split('\n')) {
    try {
      const v = JSON.parse(line) as { status?: unknown };
      if (typeof v?.status === 'string') last = v.status;
    } catch {
      return { status: null, problem: 'the status file is neither a token nor a JSON-lines log (corrupt?)' };
    }
  }
  if (last !== undefined && STATUS_TOKENS.has(last)) return { status: last as StatusToken };
  return { status: null, problem: 'the status log has no known status' };
}
