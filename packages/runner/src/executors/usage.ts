/**
 * What one attempt used (CPU time, peak memory) and how its process ended, measured by the
 * executors that can and written next to the attempt's other files (`{attemptDir}/usage.json`,
 * the directory `Store.attemptFiles(path, attempt).dir` names), so `cairn status` and
 * `cairn report` can show it. What each executor measures:
 *
 * - `process`: the worker process's own CPU time (user + system) and peak resident set size,
 *   from `process.resourceUsage()` at its exit, and its exit code or signal. Processes the step
 *   starts itself are not counted.
 * - `threads`: the worker thread's CPU time (Linux `/proc/thread-self/schedstat`; omitted
 *   elsewhere) and the thread's V8 heap size at the end of the attempt (`heap`: V8 grows the
 *   heap to the step's peak and shrinks it lazily; a thread is reused, so it can include what an
 *   earlier attempt on that thread left). Threads share the process's resident memory, so no
 *   RSS is given.
 * - `inline`: nothing (steps share the runner's thread and interleave).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** File name of an attempt's usage inside its attempt directory. */
export const USAGE_FILE = 'usage.json';

/** What an attempt used, as measured by its executor. */
export interface AttemptUsage {
  /** The executor that measured it. */
  readonly executor: string;
  /** CPU time, user + system (ms). */
  readonly cpuMs?: number;
  /** What `cpuMs` covers: the worker `process`, or the worker `thread`. */
  readonly cpuScope?: 'process' | 'thread';
  /** Peak memory (bytes). */
  readonly peakMemoryBytes?: number;
  /** What `peakMemoryBytes` is: the process's peak resident set (`rss`) or the thread's V8 heap (`heap`). */
  readonly memoryKind?: 'rss' | 'heap';
  /** Exit code of the worker process (`process`). */
  readonly exitCode?: number | null;
  /** Signal that ended the worker process, if one did. */
  readonly signal?: string | null;
}

/** Where an attempt's usage is kept. */
export function usageFile(attemptDir: string): string {
  return join(attemptDir, USAGE_FILE);
}

/**
 * Writes an attempt's usage (best effort: a measurement never fails a step). The attempt's
 * directory is created if missing, but never the directories above it: once the attempt's
 * staged directory is gone (committed, or dropped after a cancel) nothing is re-created beside
 * the output.
 */
export function writeUsage(attemptDir: string, usage: AttemptUsage): void {
  try {
    if (!existsSync(attemptDir)) mkdirSync(attemptDir);
    writeFileSync(usageFile(attemptDir), JSON.stringify(usage));
  } catch {
    // not measured, then
  }
}

/** An attempt's usage; null when none was measured (or the file is unreadable). */
export async function readUsage(attemptDir: string): Promise<AttemptUsage | null> {
  try {
    return parseUsage(await readFile(usageFile(attemptDir), 'utf8'));
  } catch {
    return null;
  }
}

/** An attempt's usage from the text of its `usage.json` (read from any store); null when it is not one. */
export function parseUsage(text: string): AttemptUsage | null {
  try {
    const v = JSON.parse(text) as unknown;
    return typeof v === 'object' && v !== null && typeof (v as AttemptUsage).executor === 'string' ? (v as AttemptUsage) : null;
  } catch {
    return null;
  }
}

/**
 * A `--import=` flag for a worker process: at its exit the process writes its own CPU time and
 * peak RSS to the file named by `CAIRN_USAGE_FILE` (set per attempt). A data URL, so no extra
 * built file is needed.
 */
export const PROCESS_USAGE_IMPORT = `--import=data:text/javascript,${encodeURIComponent(
  `import { writeFileSync } from 'node:fs';
const file = process.env.CAIRN_USAGE_FILE;
if (file) process.on('exit', (code) => {
  try {
    const u = process.resourceUsage();
    writeFileSync(file, JSON.stringify({ executor: 'process', cpuMs: (u.userCPUTime + u.systemCPUTime) / 1000, cpuScope: 'process', peakMemoryBytes: u.maxRSS * 1024, memoryKind: 'rss', exitCode: code, signal: null }));
  } catch {}
});`,
).replace(/'/g, '%27')}`;

/** Adds how the worker process ended to what it wrote at exit (or records only that, when it was killed before writing). */
export function completeProcessUsage(attemptDir: string, exitCode: number | null, signal: string | null): void {
  let usage: AttemptUsage = { executor: 'process' };
  try {
    usage = JSON.parse(readFileSync(usageFile(attemptDir), 'utf8')) as AttemptUsage;
  } catch {
    // killed before its exit handler ran
  }
  writeUsage(attemptDir, { ...usage, exitCode, signal });
}

/** CPU time this thread has used (ms), where the OS tells (Linux); undefined elsewhere. */
export function threadCpuMs(): number | undefined {
  try {
    const ns = Number(readFileSync('/proc/thread-self/schedstat', 'latin1').split(' ')[0]);
    return Number.isFinite(ns) ? ns / 1e6 : undefined;
  } catch {
    return undefined;
  }
}
