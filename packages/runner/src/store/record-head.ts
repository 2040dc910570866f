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
/** `key": ` of each key: searched for, then checked to start a line as `\n  "` (an absent `version` is found absent ×2.5 faster so than by the whole marker: bench row warm-100k). */
const TAILS = KEYS.map((k) => Buffer.from(`${k}": `, 'latin1'));
/** How a record Cairn wrote starts. */
const START = Buffer.from('{\n  "cairn": 1,', 'latin1');

/**
 * The JSON string starting at `at` (a `"`) in `bytes`, decoded into a string of its own (not a
 * slice of the record, which would keep it alive with the step's state); undefined when there is
 * none there. Bytes of a multi-byte character are never a quote or a backslash.
 */
function stringAt(bytes: Buffer, at: number): string | undefined {
  if (bytes[at] !== 34) return undefined;
  let escaped = false;
  for (let i = at + 1; i < bytes.length; i++) {
    const c = bytes[i] as number;
    if (c === 92) {
      escaped = true;
      i++; // the escaped character
    } else if (c === 34) {
      if (!escaped) return utf8(bytes, at + 1, i);
      try {
        return JSON.parse(utf8(bytes, at, i + 1)) as string;
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

function utf8(bytes: Buffer, from: number, to: number): string {
  return bytes.toString('utf8', from, to);
}

/** Where the value of the first top-level member `\n  "key": ` starts (`tail`: `key": `), or -1. */
function memberAt(bytes: Buffer, tail: Buffer): number {
  for (let at = bytes.indexOf(tail); at >= 0; at = bytes.indexOf(tail, at + 1)) {
    if (at >= 4 && bytes[at - 1] === 34 && bytes[at - 2] === 32 && bytes[at - 3] === 32 && bytes[at - 4] === 10) return at + tail.length;
  }
  return -1;
}

function isSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9;
}

/** The identity fields of a record's text; `problem` when it is not a usable record. */
export function recordHead(text: string): { head: RecordHead | null; problem?: string } {
  return headOf(Buffer.from(text, 'utf8'), text);
}

/**
 * {@link recordHead} of the record in `bytes[from, to)` (UTF-8), read without decoding the whole
 * record: a warm run's batch reads hand their bytes here, and 10^5 records of 1–2 KB made into
 * strings only to be searched were most of its collector's work (bench row warm-100k).
 */
export function recordHeadIn(bytes: Buffer, from: number, to: number): { head: RecordHead | null; problem?: string } {
  return headOf(bytes.subarray(from, to), undefined);
}

/** {@link recordHead} of `bytes` (whose text is `text`, when the caller has it). */
function headOf(bytes: Buffer, text: string | undefined): { head: RecordHead | null; problem?: string } {
  let end = bytes.length - 1;
  while (end >= 0 && isSpace(bytes[end] as number)) end--;
  // A Cairn record starts with `{\n  "cairn": 1,`; anything else (Marin's, compact JSON) is parsed whole.
  if (bytes.length < START.length || bytes.compare(START, 0, START.length, 0, START.length) !== 0 || bytes[end] !== 125 || bytes[end - 1] !== 10) return whole(bytes, text);
  const head: Record<string, unknown> = { cairn: 1 };
  for (let k = 0; k < KEYS.length; k++) {
    const at = memberAt(bytes, TAILS[k] as Buffer);
    if (at < 0) continue;
    const value = stringAt(bytes, at);
    if (value === undefined) return whole(bytes, text);
    head[KEYS[k] as string] = value;
  }
  return { head: head as RecordHead };
}

function whole(bytes: Buffer, text: string | undefined): { head: RecordHead | null; problem?: string } {
  const r = parseRecord(text ?? utf8(bytes, 0, bytes.length));
  return r.problem === undefined ? { head: r.record } : { head: null, problem: r.problem };
}
