import { CairnError } from './errors.js';
import { describeValue } from './known-keys.js';

// Control characters (C0, DEL, C1) never belong in a path segment.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** The path segment Cairn keeps its own files under (`{prefix}/.cairn/runs`, `{step}/.cairn/logs`). */
export const RESERVED_SEGMENT = '.cairn';

/**
 * Checks a step name or version: non-empty, not `.` or `.cairn`, no `/`, no `..`, no URL
 * scheme, no control characters, no leading/trailing whitespace. Throws `CAIRN_INVALID_NAME`
 * naming the fix.
 */
export function validateSegment(kind: 'name' | 'version', value: unknown, step?: string): string {
  const shown = typeof value === 'string' ? JSON.stringify(value) : typeof value === 'bigint' ? `${value}n` : typeof value === 'symbol' ? value.toString() : typeof value === 'object' && value !== null ? describeValue(value) : String(value);
  const who = step ?? (typeof value === 'string' ? value : shown);
  const fail = (why: string): never => {
    throw new CairnError('CAIRN_INVALID_NAME', `Step "${who}": invalid ${kind} ${shown}: ${why}`, { step: who });
  };
  if (typeof value !== 'string') return fail(`the ${kind} must be a string.`);
  if (value.length === 0) return fail(`the ${kind} is empty; give the step a ${kind}.`);
  if (value.includes('://')) return fail(`it contains a URL scheme; use a plain ${kind} (paths come from the prefix).`);
  if (value.includes('/')) return fail(`it contains "/"; use "-" or "_" instead (a ${kind} is one path segment).`);
  if (value === '.') return fail(`"." means the directory itself; give the step a real ${kind} such as "tokenize" or "v1".`);
  if (value.includes('..')) return fail(`it contains ".."; remove it.`);
  if (value === RESERVED_SEGMENT) return fail(`"${RESERVED_SEGMENT}" is reserved for Cairn's own files (run journals, logs, job records); choose another ${kind}.`);
  if (CONTROL.test(value)) return fail(`it contains a control character; remove it.`);
  if (value.trim() !== value) return fail(`it has leading or trailing whitespace; trim it.`);
  if (!value.isWellFormed()) return fail(`it holds a lone surrogate; fix the text encoding.`);
  return value;
}

/**
 * A version that is `dev` or ends in `-dev` marks a mutable artifact: it is rebuilt on every run
 * (Marin's rule; `"undev"` or `"2026dev"` are ordinary versions).
 */
export function isMutableVersion(version: string): boolean {
  return version === 'dev' || version.endsWith('-dev');
}

/** How versions are checked: `'free'` takes any valid segment; `'calendar'` takes Marin's `YYYY.MM.DD[.N]`, `dev` and `…-dev` only. */
export type VersionRule = 'free' | 'calendar';

/** Marin's calendar version: `YYYY.MM.DD` with an optional `.N` (a real month and day). */
const CALENDAR = /^\d{4}\.(0[1-9]|1[0-2])\.(0[1-9]|[12]\d|3[01])(\.\d+)?$/;

/** True when `version` passes the `'calendar'` rule: a calendar version, `dev`, or a calendar version ending in `-dev`. */
export function isCalendarVersion(version: string): boolean {
  if (version === 'dev') return true;
  return CALENDAR.test(version.endsWith('-dev') ? version.slice(0, -4) : version);
}

/** Throws `CAIRN_BAD_VERSION` naming the step and the fix when `version` breaks `rule`. */
export function checkVersionRule(version: string, rule: VersionRule, step: string): void {
  if (rule === 'free' || isCalendarVersion(version)) return;
  throw new CairnError(
    'CAIRN_BAD_VERSION',
    `Step "${step}": version ${JSON.stringify(version)} is not a calendar version. This runner takes versions: 'calendar' — write YYYY.MM.DD or YYYY.MM.DD.N (e.g. "2026.12.01"), "dev", or one of those ending in "-dev" for a step under development; or set versions: 'free' to allow any version.`,
    { step },
  );
}

/** What an executor name looks like: a letter, then letters, digits, `.`, `_` or `-`; at most 64 characters. */
export const EXECUTOR_NAME = /^[A-Za-z][A-Za-z0-9._-]{0,63}$/;

/**
 * Checks an executor name (a step's `executor`, a runner's `defaultExecutor`, a registered
 * executor's name) against {@link EXECUTOR_NAME}; throws `code` (`CAIRN_INVALID_SPEC` for a
 * step's option, `CAIRN_CONFIG` for a runner's) naming `where` and the fix.
 */
export function checkExecutorName(value: unknown, where: string, code: 'CAIRN_INVALID_SPEC' | 'CAIRN_CONFIG', step?: string): string {
  if (typeof value === 'string' && EXECUTOR_NAME.test(value)) return value;
  const shown = typeof value === 'string' ? JSON.stringify(value) : value === null ? 'null' : `a ${typeof value}`;
  throw new CairnError(
    code,
    `${where}: ${shown} is not an executor name; use a registered executor's name such as "inline", "threads", "process" or "ssh" (a letter, then letters, digits, ".", "_" or "-", at most 64 characters).`,
    { step },
  );
}
