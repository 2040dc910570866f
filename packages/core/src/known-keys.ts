/**
 * Unknown option keys are refused, not ignored: TypeScript catches a misspelt `retires: 3`, a
 * JavaScript pipeline or a config file does not, and a dropped option fails silently later.
 */
import { CairnError, type CairnErrorCode } from './errors.js';

/** Where {@link checkKnownKeys} reports a key: the step it is about, and the code to raise. */
export interface KnownKeysOptions {
  /** The step the options belong to (set on the error). */
  readonly step?: string | undefined;
  /** The error code. @default 'CAIRN_UNKNOWN_OPTION' */
  readonly code?: CairnErrorCode;
}

/** Optimal string alignment distance (Levenshtein plus adjacent transpositions), case-insensitive. */
function distance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  if (x === y) return a === b ? 0 : 0.5;
  const n = x.length;
  const m = y.length;
  let prev2 = new Array<number>(m + 1).fill(0);
  let prev = Array.from({ length: m + 1 }, (_, j) => j);
  let cur = new Array<number>(m + 1).fill(0);
  for (let i = 1; i <= n; i++) {
    cur[0] = i;
    for (let j = 1; j <= m; j++) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      let d = Math.min((prev[j] as number) + 1, (cur[j - 1] as number) + 1, (prev[j - 1] as number) + cost);
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) d = Math.min(d, (prev2[j - 2] as number) + 1);
      cur[j] = d;
    }
    [prev2, prev, cur] = [prev, cur, prev2];
  }
  return prev[m] as number;
}

function isSubsequence(short: string, long: string): boolean {
  let j = 0;
  for (let i = 0; i < long.length && j < short.length; i++) if (long[i] === short[j]) j++;
  return j === short.length;
}

/**
 * The candidate closest to `word` (edit distance, ignoring case), or `undefined` when none is
 * close enough to be a plausible typo (at most 2 edits, and at most a third of the word's length
 * for short words). Also finds a candidate that `word` merely extends or abbreviates
 * (`"maxConcurrency"` → `"maxConcurrent"`, `"retry"` → `"retries"`); ties go to the candidate
 * sharing the longer start.
 */
export function nearestName(word: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestD = Number.POSITIVE_INFINITY;
  let bestShared = -1;
  const lw = word.toLowerCase();
  for (const c of candidates) {
    const lc = c.toLowerCase();
    let shared = 0;
    while (shared < lw.length && shared < lc.length && lw[shared] === lc[shared]) shared++;
    let d = distance(word, c);
    // One extends or abbreviates the other (`timeout` / `timeoutMs`, `retry` / `retries`).
    if (d > 1 && shared >= 4 && shared >= 0.6 * Math.min(lw.length, lc.length)) d = 1;
    // An abbreviation: the word's letters appear in order in the candidate (`memGb` / `memoryGb`).
    else if (d > 1 && lw.length >= 4 && shared >= 2 && isSubsequence(lw, lc)) d = 1;
    // Ties go to the longer shared start (`gpu`: `gpus`, not `cpu`).
    if (d < bestD || (d === bestD && shared > bestShared)) {
      bestD = d;
      best = c;
      bestShared = shared;
    }
  }
  if (best === undefined) return undefined;
  const limit = Math.min(2, Math.max(1, Math.floor(word.length / 3)));
  return bestD <= limit ? best : undefined;
}

/** `value` shown in a message: strings quoted, other values with their type (so `"4"` and `4` read differently). */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return `${JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value)} (a string)`;
  if (typeof value === 'number') return `${String(value)} (a number)`;
  if (typeof value === 'bigint') return `${String(value)}n (a bigint)`;
  if (typeof value === 'boolean') return `${String(value)} (a boolean)`;
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (typeof value === 'symbol') return `${value.toString()} (a symbol)`;
  if (typeof value === 'function') return `a function${value.name ? ` (${value.name})` : ''}`;
  if (Array.isArray(value)) return `an array of ${value.length}`;
  const ctor = (value as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof ctor === 'string' && ctor !== 'Object' ? `an instance of ${ctor}` : 'an object';
}

/**
 * Throws a typed error (`CAIRN_UNKNOWN_OPTION` unless `options.code` says otherwise) for the
 * first key of `value` that is not in `known`, naming the key, `where` it was found and the
 * nearest known key. Enumerable keys are checked, inherited ones too (they would be read).
 *
 * ```ts
 * checkKnownKeys(opts, APPLY_KEYS, `apply() for step "${opts.name}"`, { step: opts.name });
 * // CAIRN_UNKNOWN_OPTION: apply() for step "train": unknown option "retires"; did you mean "retries"? …
 * ```
 */
export function checkKnownKeys(value: object, known: ReadonlySet<string> | readonly string[], where: string, options: KnownKeysOptions = {}): void {
  if (Array.isArray(known)) {
    for (const key in value) if (!known.includes(key)) throw unknownKey(key, known, where, options);
    return;
  }
  const set = known as ReadonlySet<string>;
  for (const key in value) if (!set.has(key)) throw unknownKey(key, set, where, options);
}

/** The error {@link checkKnownKeys} throws for `key`. */
export function unknownKey(key: string, known: Iterable<string>, where: string, options: KnownKeysOptions = {}): CairnError {
  const list = [...known];
  const near = nearestName(key, list);
  const hint = near !== undefined ? `did you mean "${near}"?` : `remove it.`;
  return new CairnError(options.code ?? 'CAIRN_UNKNOWN_OPTION', `${where}: unknown option ${JSON.stringify(key)}; ${hint} Known options: ${list.join(', ')}.`, { step: options.step });
}
