/**
 * A record's identity fields read without parsing it. A warm run checks every built step's
 * record (`classify.ts`: missing, empty, half-written, another step's, another output path), and
 * `JSON.parse` of 10^5 records and the garbage it leaves were most of a warm 100k rerun's time
 * (tools/bench row "warm rerun, 100k layered, local disk": 3.2 s → see the bench README).
 * Stores write records with `JSON.stringify(record, null, 2)`, so a top-level member is the only
 * place a line starts with exactly two spaces and a quote, and the object's own `}` the only one
 * at the start of a line (a string cannot hold a raw newline; nested lines are indented further):
 * the fields are found by those markers, and a record cut short anywhere lacks the final `\n}`.
 * Anything the scanner does not recognise (Marin's records, compact JSON) is parsed whole, so the
 * fields are the ones `JSON.parse` would give. What it does not check is the JSON *between* the
 * fields: a record edited by hand into invalid JSON with its first line and last `}` intact is
 * taken as whole (a commit writes records whole, by temp file and rename).
 */
import { parseRecord } from './records.js';

/** The fields that say whose record it is (see `classify.ts`). */
export interface RecordHead {
  /** Set (to 1) on records Cairn wrote; Marin's have none. */
  readonly cairn?: unknown;
  readonly name?: string;
  readonly nameWithHash?: string;
  readonly version?: string;
  readonly outputPath?: string;
}

const KEYS = ['name', 'nameWithHash', 'version', 'outputPath'] as const;
const MARKERS = KEYS.map((k) => `\n  "${k}": `);

/** The JSON string starting at `at` (a `"`), decoded; undefined when there is none there. */
function stringAt(text: string, at: number): string | undefined {
  if (text.charCodeAt(at) !== 34) return undefined;
  let escaped = false;
  for (let i = at + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 92) {
      escaped = true;
      i++; // the escaped character
    } else if (c === 34) {
      // A copy, not a slice: a slice keeps the whole record's text alive with the step's state
      // (10^5 of them survive a warm run's scavenges: half its GC time, bench row "warm rerun").
      if (!escaped) return flat(text.slice(at + 1, i));
      try {
        return JSON.parse(text.slice(at, i + 1)) as string;
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/** `s` in a string of its own (V8 makes a slice of 13 characters or more point into its parent). */
function flat(s: string): string {
  return (' ' + s).slice(1);
}

function isSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9;
}

/** The identity fields of a record's text; `problem` when it is not a usable record. */
export function recordHead(text: string): { head: RecordHead | null; problem?: string } {
  let end = text.length - 1;
  while (end >= 0 && isSpace(text.charCodeAt(end))) end--;
  // A Cairn record starts with `{\n  "cairn": 1,`; anything else (Marin's, compact JSON) is parsed whole.
  if (!text.startsWith('{\n  "cairn": 1,') || text.charCodeAt(end) !== 125 || text.charCodeAt(end - 1) !== 10) return whole(text);
  const head: Record<string, unknown> = { cairn: 1 };
  for (let k = 0; k < KEYS.length; k++) {
    const m = text.indexOf(MARKERS[k] as string);
    if (m < 0) continue;
    const value = stringAt(text, m + (MARKERS[k] as string).length);
    if (value === undefined) return whole(text);
    head[KEYS[k] as string] = value;
  }
  return { head: head as RecordHead };
}

function whole(text: string): { head: RecordHead | null; problem?: string } {
  const r = parseRecord(text);
  return r.problem === undefined ? { head: r.record } : { head: null, problem: r.problem };
}
