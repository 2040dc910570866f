/**
 * What one attempt used (wall time, CPU time, peak memory, GPU) and how its process ended,
 * measured by the executors that can and written next to the attempt's other files
 * (`{attemptDir}/usage.json`, the directory `Store.attemptFiles(path, attempt).dir` names), so
 * `cairn status`, `cairn report` and `cairn ui` can show it. Every field but `executor` is
 * optional: a reader shows "not measured" for what is missing. What each executor measures:
 *
 * - `process`: the worker process and every process it starts (`cpuScope: 'tree'`,
 *   `memoryScope: 'tree'`): the runner samples the worker's process tree and group from `/proc`
 *   (usage/tree-meter.ts says how accurately), and the worker adds its own exact CPU time, that
 *   of the children it waited for and its own peak RSS (`process.resourceUsage()`, `/proc/self/stat`)
 *   at its exit; the larger of each is kept. Exit code or signal.
 * - `threads`: the worker thread's CPU time (Linux `/proc/thread-self/schedstat`) and its V8
 *   heap (`heap`: V8 grows the heap to the step's peak and shrinks it lazily; a thread is reused,
 *   so it can include what an earlier attempt left). Threads share the runner's resident memory,
 *   so no RSS is given for the thread; the processes the step starts (found by their mark,
 *   marked-processes.ts) are sampled into `childCpuMs` and `childPeakRssBytes`, and their CPU is
 *   added to `cpuMs` (`cpuScope: 'tree'`). A command step's program is sampled as a tree.
 * - `inline`: best effort (`bestEffort: true`): only command steps (their program's tree,
 *   sampled) and asynchronous function steps of a second or more (the runner process's CPU time
 *   over the attempt, shared with every other step it ran meanwhile: `cpuScope: 'runner'`).
 * - SSH, Slurm and SGE measure on the far side, where scheduler accounting may be missing (`sacct`
 *   needs slurmdbd): a Node worker started by a job wrapper samples its own tree
 *   (worker/self-usage.ts); a command step's shell wrapper samples its program with `times`, `ps`
 *   and `awk` (usage/usage-sh.ts; no Node needed); a step of the SSH persistent worker is measured
 *   as a `threads` step is; a packed Node step by its pack worker (@cairn/grid pack-usage.ts).
 *   SSH copies the file back next to the attempt's other files; the grid's is there already.
 *
 * GPU fields are there only where `nvidia-smi` was on the measuring host's PATH (usage/gpu.ts).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { SAMPLE_INTERVAL_MS, type TreeUsage } from '../usage/tree-meter.js';

/** File name of an attempt's usage inside its attempt directory. */
export const USAGE_FILE = 'usage.json';

/** What an attempt used, as measured by its executor. */
export interface AttemptUsage {
  /** The executor that measured it. */
  readonly executor: string;
  /** Wall time of the attempt as the measuring side saw it (ms). */
  readonly wallMs?: number;
  /** CPU time, user + system (ms). */
  readonly cpuMs?: number;
  /**
   * What `cpuMs` covers: the worker `process` alone (files written before process trees were
   * measured), the worker `thread`, the `tree` of processes (a worker or program and everything
   * it started; for `threads`, the thread plus the processes it started), or the whole `runner`
   * process over the attempt (inline: shared with the steps that ran meanwhile).
   */
  readonly cpuScope?: 'process' | 'thread' | 'tree' | 'runner';
  /** Peak memory (bytes). */
  readonly peakMemoryBytes?: number;
  /** What `peakMemoryBytes` is: a peak resident set (`rss`) or the thread's V8 heap (`heap`). */
  readonly memoryKind?: 'rss' | 'heap';
  /**
   * Whose resident set `peakMemoryBytes` is (`rss` only): the worker `process` alone, the `tree`
   * of processes (summed per sample), or the `runner` process's lifetime peak (inline).
   * @default 'process'
   */
  readonly memoryScope?: 'process' | 'tree' | 'runner';
  /** `threads`: CPU time of the processes the step started (ms); already included in `cpuMs`. */
  readonly childCpuMs?: number;
  /** `threads`: peak resident memory of the processes the step started, together (bytes). */
  readonly childPeakRssBytes?: number;
  /** Peak GPU memory of the attempt's processes (bytes); absent when `nvidia-smi` was not on the host's PATH. */
  readonly gpuPeakMemoryBytes?: number;
  /** Mean utilisation (percent) of the GPUs the attempt's processes were on; absent when they were on none, or not measured. */
  readonly gpuUtilizationPercent?: number;
  /** Set when the process numbers are `/proc` samples taken this often (ms): lower bounds, see usage/tree-meter.ts. */
  readonly sampleIntervalMs?: number;
  /** True when the numbers are a best effort that may include other steps' use (the `inline` executor). */
  readonly bestEffort?: boolean;
  /** What the numbers cover, in words, when that is not the executor's usual (e.g. inline's caveat). */
  readonly note?: string;
  /** Exit code of the worker process or program. */
  readonly exitCode?: number | null;
  /** Signal that ended the worker process or program, if one did. */
  readonly signal?: string | null;
}

/** Where an attempt's usage is kept. */
export function usageFile(attemptDir: string): string {
  return join(attemptDir, USAGE_FILE);
}

/**
 * Writes an attempt's usage (best effort: a measurement never fails a step). The attempt's
 * directory (and its parent, `.cairn`) is created if missing, but never the staged directory above them: once the attempt's
 * staged directory is gone (committed, or dropped after a cancel) nothing is re-created beside
 * the output.
 */
export function writeUsage(attemptDir: string, usage: AttemptUsage): void {
  try {
    makeAttemptDir(attemptDir);
    writeFileSync(usageFile(attemptDir), JSON.stringify(usage));
  } catch {
    // not measured, then
  }
}

/**
 * Creates the attempt's directory (and `.cairn` above it) unless it exists, never the staged
 * directory above them. One mkdir where the attempt's first file is written (a command step's
 * usage: `.cairn` holds its logs already), not two existence checks first (bench row "local,
 * 1 at a time" of command.bench.mjs).
 */
function makeAttemptDir(attemptDir: string): void {
  try {
    mkdirSync(attemptDir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return;
    if (code !== 'ENOENT') throw err;
    mkdirSync(dirname(attemptDir));
    mkdirSync(attemptDir);
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
 * A `--import=` flag for a worker process: at its exit the process writes its own CPU time (plus
 * that of the children it waited for, `/proc/self/stat` fields 16–17, in 10 ms ticks) and peak RSS to the file named by `CAIRN_USAGE_FILE` (set per attempt). A data URL, so no extra
 * built file is needed.
 */
export const PROCESS_USAGE_IMPORT = `--import=data:text/javascript,${encodeURIComponent(
  `import { readFileSync, writeFileSync } from 'node:fs';
const file = process.env.CAIRN_USAGE_FILE;
if (file) process.on('exit', (code) => {
  try {
    const u = process.resourceUsage();
    let children = 0;
    try {
      const f = readFileSync('/proc/self/stat', 'latin1').split(')').pop().trim().split(' ');
      children = (Number(f[13]) + Number(f[14])) * 10;
    } catch {}
    writeFileSync(file, JSON.stringify({ executor: 'process', cpuMs: (u.userCPUTime + u.systemCPUTime) / 1000 + (Number.isFinite(children) ? children : 0), cpuScope: 'process', peakMemoryBytes: u.maxRSS * 1024, memoryKind: 'rss', exitCode: code, signal: null }));
  } catch {}
});`,
).replace(/'/g, '%27')}`;

/**
 * The fields a sampled process tree gives (usage/tree-meter.ts): its CPU time and peak RSS as
 * the attempt's (`tree` scope), and the GPU numbers where they were measured.
 */
export function treeUsageFields(tree: TreeUsage): Partial<AttemptUsage> {
  return {
    wallMs: tree.wallMs,
    ...(tree.cpuMs !== undefined ? { cpuMs: tree.cpuMs, cpuScope: 'tree' as const } : {}),
    ...(tree.peakRssBytes !== undefined ? { peakMemoryBytes: tree.peakRssBytes, memoryKind: 'rss' as const, memoryScope: 'tree' as const } : {}),
    ...(tree.gpuPeakMemoryBytes !== undefined ? { gpuPeakMemoryBytes: tree.gpuPeakMemoryBytes } : {}),
    ...(tree.gpuUtilizationPercent !== undefined ? { gpuUtilizationPercent: tree.gpuUtilizationPercent } : {}),
    sampleIntervalMs: SAMPLE_INTERVAL_MS,
  };
}

/**
 * Adds how the worker process ended, and what the runner sampled of its process tree, to what
 * the worker wrote at exit (or records only those, when it was killed before writing). Of the
 * worker's exact own numbers and the tree's sampled ones, the larger is kept.
 */
export function completeProcessUsage(attemptDir: string, exitCode: number | null, signal: string | null, tree?: TreeUsage): void {
  let usage: AttemptUsage = { executor: 'process' };
  try {
    usage = JSON.parse(readFileSync(usageFile(attemptDir), 'utf8')) as AttemptUsage;
  } catch {
    // killed before its exit handler ran
  }
  if (tree !== undefined) {
    const t = treeUsageFields(tree);
    usage = {
      ...usage,
      ...t,
      cpuMs: Math.max(usage.cpuMs ?? 0, t.cpuMs ?? 0),
      cpuScope: 'tree',
      peakMemoryBytes: Math.max(usage.peakMemoryBytes ?? 0, t.peakMemoryBytes ?? 0),
      memoryKind: 'rss',
      memoryScope: 'tree',
    };
  }
  writeUsage(attemptDir, { ...usage, exitCode, signal });
}

/**
 * Adds the processes a `threads` step started (sampled by the runner) to what its thread wrote:
 * their CPU time into `cpuMs` (and `childCpuMs`), their peak RSS as `childPeakRssBytes`, and
 * the GPU numbers.
 */
export function addChildUsage(attemptDir: string, children: TreeUsage): void {
  let usage: AttemptUsage = { executor: 'threads' };
  try {
    usage = JSON.parse(readFileSync(usageFile(attemptDir), 'utf8')) as AttemptUsage;
  } catch {
    // the thread was terminated before it wrote
  }
  const childCpuMs = children.cpuMs ?? 0;
  writeUsage(attemptDir, {
    ...usage,
    cpuMs: (usage.cpuMs ?? 0) + childCpuMs,
    cpuScope: 'tree',
    childCpuMs,
    ...(children.peakRssBytes !== undefined ? { childPeakRssBytes: children.peakRssBytes } : {}),
    ...(children.gpuPeakMemoryBytes !== undefined ? { gpuPeakMemoryBytes: children.gpuPeakMemoryBytes } : {}),
    ...(children.gpuUtilizationPercent !== undefined ? { gpuUtilizationPercent: children.gpuUtilizationPercent } : {}),
    sampleIntervalMs: SAMPLE_INTERVAL_MS,
  });
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
