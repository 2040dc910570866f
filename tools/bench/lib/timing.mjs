// Small timing and statistics helpers shared by the cases and the orchestrator.
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

/**
 * A full collection before a timed region (when the process runs with --expose-gc, as the
 * orchestrator starts it): the untimed setup of a repetition (building specs, graphs, inputs)
 * leaves garbage, and collecting it belongs to the setup, not to the work being timed.
 */
const settle = globalThis.gc ?? (() => undefined);

/**
 * The clock: wall time, or with `CAIRN_BENCH_CLOCK=cpu` the process's CPU time (user + system,
 * every thread: GC helpers and libuv's pool included). On a machine shared with other work the
 * wall clock counts the time other processes held the cores; CPU time does not.
 */
export const clock =
  process.env.CAIRN_BENCH_CLOCK === 'cpu'
    ? () => {
        const u = process.cpuUsage();
        return (u.user + u.system) / 1000;
      }
    : () => performance.now();

/** Milliseconds `fn` takes (awaited), from a collected heap. */
export async function timeAsync(fn) {
  settle();
  const t = clock();
  await fn();
  return clock() - t;
}

/** Milliseconds `fn` takes (synchronous), and its result, from a collected heap. */
export function timeSync(fn) {
  settle();
  const t = clock();
  const value = fn();
  return { ms: clock() - t, value };
}

/** CPU time (ms, 10 ms ticks) of the children this process has waited for: `/proc/self/stat`'s cutime + cstime. */
function waitedChildrenMs() {
  const text = readFileSync('/proc/self/stat', 'latin1');
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return (Number(f[13]) + Number(f[14])) * 10;
}

/**
 * Milliseconds `fn` takes when the work is a child process it waits for (a Python peer): with
 * `CAIRN_BENCH_CLOCK=cpu`, the child's CPU time (and this process's), as {@link clock} counts a
 * Cairn row's; else wall time.
 */
export function timeChildSync(fn) {
  if (process.env.CAIRN_BENCH_CLOCK !== 'cpu') return timeSync(fn);
  settle();
  const t = clock() + waitedChildrenMs();
  const value = fn();
  return { ms: clock() + waitedChildrenMs() - t, value };
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
