// Small timing and statistics helpers shared by the cases and the orchestrator.
import { performance } from 'node:perf_hooks';

/**
 * A full collection before a timed region (when the process runs with --expose-gc, as the
 * orchestrator starts it): the untimed setup of a repetition (building specs, graphs, inputs)
 * leaves garbage, and collecting it belongs to the setup, not to the work being timed.
 */
const settle = globalThis.gc ?? (() => undefined);

/** Milliseconds `fn` takes (awaited), from a collected heap. */
export async function timeAsync(fn) {
  settle();
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

/** Milliseconds `fn` takes (synchronous), and its result, from a collected heap. */
export function timeSync(fn) {
  settle();
  const t = performance.now();
  const value = fn();
  return { ms: performance.now() - t, value };
}

/** Median of a non-empty list of numbers. */
export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Throws when `ok` is false: a benchmark that computed a wrong answer must not report a time. */
export function check(ok, message) {
  if (!ok) throw new Error(`bench self-check failed: ${message}`);
}
