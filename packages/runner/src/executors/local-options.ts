/**
 * Checks of the local executors' options, one table per executor: an unknown key is
 * `CAIRN_UNKNOWN_OPTION` naming the nearest known one (a misspelt `maxThread` used to be ignored
 * and the default used in silence); a bad value is `CAIRN_CONFIG` saying what it must be.
 */
import { CairnError, checkKnownKeys, describeValue } from '@cairn/core';

type Check = (value: unknown) => string | undefined;

const count = (min: number): Check => (v) => (typeof v === 'number' && Number.isSafeInteger(v) && v >= min ? undefined : `must be an integer of at least ${min}`);
const ms: Check = (v) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? undefined : 'must be a number of milliseconds (0 or more)');
const strings: Check = (v) => (Array.isArray(v) && v.every((s) => typeof s === 'string') ? undefined : 'must be a list of strings');
const env: Check = (v) =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((s) => typeof s === 'string') ? undefined : 'must be an object of string values (variable → value)';

const TABLES = {
  threads: { maxThreads: count(1), minThreads: count(0), cancelGraceMs: ms, execArgv: strings },
  process: { nodeArgs: strings, killGraceMs: ms, env },
} satisfies Record<string, Record<string, Check>>;

/** Throws for unknown keys and bad values of `options`, the options of the `executor` executor. */
export function checkLocalExecutorOptions(executor: keyof typeof TABLES, options: unknown): void {
  const where = `the ${executor} executor's options`;
  if (options === undefined) return;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw new CairnError('CAIRN_CONFIG', `${where} must be an object, got ${describeValue(options)}.`);
  const table: Record<string, Check> = TABLES[executor];
  checkKnownKeys(options, Object.keys(table), where);
  for (const [key, value] of Object.entries(options)) {
    if (value === undefined) continue;
    const why = table[key]?.(value);
    if (why !== undefined) throw new CairnError('CAIRN_CONFIG', `${where}: ${key} ${why}, got ${describeValue(value)}.`);
  }
}
