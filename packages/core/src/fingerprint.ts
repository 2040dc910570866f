import { getBackend } from './backend.js';
import { canonicalize, type CanonicalOptions } from './canonical.js';

/** 16 hex digits: XXH64 of the canonical encoding of `value` (docs/identity.md). */
export function fingerprint(value: unknown, options: CanonicalOptions = {}): string {
  return getBackend().xxh64Hex(canonicalize(value, options));
}

/** Options of {@link describeDrift}. */
export interface DriftOptions {
  /** Maximum lines before `…and N more`. @default 10 */
  maxLines?: number;
  /** Maximum characters of one rendered value. @default 60 */
  maxValueLength?: number;
}

/**
 * A field-level diff between two fingerprint payloads (canonical JSON texts), one line per
 * difference: `lr: 0.1 -> 0.2`, `x: (added) 3`, `y: 4 (removed)`, `steps: list of 2 -> list of 3`.
 * Unparseable payloads are compared as whole strings.
 */
export function describeDrift(oldPayload: string, newPayload: string, options: DriftOptions = {}): string[] {
  const maxLines = options.maxLines ?? 10;
  const maxLen = options.maxValueLength ?? 60;
  const render = (v: unknown): string => {
    const s = JSON.stringify(v) ?? String(v);
    return s.length > maxLen ? `${s.slice(0, maxLen - 1)}…` : s;
  };
  let a: unknown;
  let b: unknown;
  try {
    a = JSON.parse(oldPayload);
    b = JSON.parse(newPayload);
  } catch {
    return oldPayload === newPayload ? [] : [`payload: ${render(oldPayload)} -> ${render(newPayload)}`];
  }
  const lines: string[] = [];
  const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  const join = (path: string, key: string) => (path ? `${path}.${key}` : key);
  // Both are command steps' payloads (command.ts): their `sources` are file hashes.
  const command = isObj(a) && isObj(b) && a.$command !== undefined && b.$command !== undefined;
  const walk = (x: unknown, y: unknown, path: string): void => {
    if (Array.isArray(x) && Array.isArray(y)) {
      if (x.length !== y.length) lines.push(`${path || 'payload'}: list of ${x.length} -> list of ${y.length}`);
      const n = Math.min(x.length, y.length);
      for (let i = 0; i < n; i++) walk(x[i], y[i], `${path}[${i}]`);
      return;
    }
    if (isObj(x) && isObj(y)) {
      if (path === 'sources' && command) {
        // A command step's declared files: say which changed, not their hashes.
        for (const k of [...new Set([...Object.keys(x), ...Object.keys(y)])].sort()) {
          if (!(k in y)) lines.push(`${k}: no longer a declared source`);
          else if (!(k in x)) lines.push(`${k}: newly declared source`);
          else if (x[k] !== y[k]) lines.push(`${k} changed`);
        }
        return;
      }
      const keys = [...new Set([...Object.keys(x), ...Object.keys(y)])].sort();
      for (const k of keys) {
        if (!(k in y)) lines.push(`${join(path, k)}: ${render(x[k])} (removed)`);
        else if (!(k in x)) lines.push(`${join(path, k)}: (added) ${render(y[k])}`);
        else walk(x[k], y[k], join(path, k));
      }
      return;
    }
    if (JSON.stringify(x) !== JSON.stringify(y)) lines.push(`${path || 'payload'}: ${render(x)} -> ${render(y)}`);
  };
  walk(a, b, '');
  if (lines.length > maxLines) {
    const more = lines.length - maxLines;
    return [...lines.slice(0, maxLines), `…and ${more} more`];
  }
  return lines;
}
