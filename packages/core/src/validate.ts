import { CairnError } from './errors.js';

// Control characters (C0, DEL, C1) never belong in a path segment.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * Checks a step name or version: non-empty, no `/`, no `..`, no URL scheme, no control
 * characters, no leading/trailing whitespace. Throws `CAIRN_INVALID_NAME` naming the fix.
 */
export function validateSegment(kind: 'name' | 'version', value: unknown, step?: string): string {
  const shown = typeof value === 'string' ? JSON.stringify(value) : typeof value === 'bigint' ? `${value}n` : typeof value === 'symbol' ? value.toString() : String(value);
  const who = step ?? (typeof value === 'string' ? value : shown);
  const fail = (why: string): never => {
    throw new CairnError('CAIRN_INVALID_NAME', `Step "${who}": invalid ${kind} ${shown}: ${why}`, { step: who });
  };
  if (typeof value !== 'string') return fail(`the ${kind} must be a string.`);
  if (value.length === 0) return fail(`the ${kind} is empty; give the step a ${kind}.`);
  if (value.includes('://')) return fail(`it contains a URL scheme; use a plain ${kind} (paths come from the prefix).`);
  if (value.includes('/')) return fail(`it contains "/"; use "-" or "_" instead (a ${kind} is one path segment).`);
  if (value === '.' || value.includes('..')) return fail(`it contains ".."; remove it.`);
  if (CONTROL.test(value)) return fail(`it contains a control character; remove it.`);
  if (value.trim() !== value) return fail(`it has leading or trailing whitespace; trim it.`);
  if (!value.isWellFormed()) return fail(`it holds a lone surrogate; fix the text encoding.`);
  return value;
}

/** A version that ends in `dev` marks a mutable artifact: it is rebuilt on every run. */
export function isMutableVersion(version: string): boolean {
  return version.endsWith('dev');
}
