// Small timing and statistics helpers shared by the cases and the orchestrator.
import { performance } from 'node:perf_hooks';

/** Milliseconds `fn` takes (awaited). */
export async function timeAsync(fn) {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

/** Milliseconds `fn` takes (synchronous), and its result. */
export function timeSync(fn) {
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
