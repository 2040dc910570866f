/**
 * What one attempt's processes use, from samples of the process table (sampler.ts): CPU time
 * (user + system), peak resident memory, and GPU memory and utilisation where `nvidia-smi` is
 * on PATH.
 *
 * Accuracy, sampling every {@link SAMPLE_INTERVAL_MS}:
 * - CPU: each process's own time at its last sample, plus the time of the children it waited
 *   for that were not seen themselves (`cutime`/`cstime`, so a short-lived child a parent reaped
 *   counts in full). What a process used between its last sample and its exit is missed unless
 *   its parent in the tree waits for it (a lower bound, off by at most one interval per process).
 * - Memory: the largest sum of resident sets seen in one sample, or the largest single process's
 *   own peak (`VmHWM`, exact for that process) when that is larger. Pages shared between
 *   processes count once per process (as `ps` and Nextflow's trace count them).
 * - GPU: the largest sum of the tree's processes' GPU memory seen in one sample, and the mean
 *   utilisation of the GPUs they were on, over the samples where they were on one. `nvidia-smi`
 *   names host pids: inside a container with its own pid namespace nothing matches.
 */
import type { GpuSample } from './gpu.js';
import { readProcMemory, type ProcEntry } from './proc-table.js';

/** Time between two samples (ms): short enough to see a step of a second, one `/proc` read per tick for all attempts. */
export const SAMPLE_INTERVAL_MS = 250;

/** What a meter measured. */
export interface TreeUsage {
  /** Wall time from the meter's start to its stop (ms). */
  readonly wallMs: number;
  /** CPU time of the processes, user + system (ms); undefined when none was ever seen. */
  readonly cpuMs?: number;
  /** Peak resident memory of the processes together (bytes); undefined when none was ever seen. */
  readonly peakRssBytes?: number;
  /** Peak GPU memory of the processes together (bytes); undefined when `nvidia-smi` never answered. */
  readonly gpuPeakMemoryBytes?: number;
  /** Mean utilisation (percent) of the GPUs the processes were on; undefined when they never were. */
  readonly gpuUtilizationPercent?: number;
  /** Process-table samples taken. */
  readonly samples: number;
}

/** Which processes are the attempt's, given the whole table. */
export type TreeSelector = (table: ReadonlyMap<number, ProcEntry>) => Iterable<number> | Promise<Iterable<number>>;

interface Seen {
  ppid: number;
  cpuMs: number;
  childCpuMs: number;
  /** Sample in which it was last seen. */
  last: number;
  /** First sample in which it was no longer there. */
  goneAt?: number;
}

/** Accumulates the samples of one attempt's processes. */
export class TreeMeter {
  readonly #select: TreeSelector;
  readonly #start = Date.now();
  readonly #seen = new Map<number, Seen>();
  #tick = 0;
  #peakRss = 0;
  #gpuAnswered = false;
  #gpuPeak = 0;
  readonly #gpuUtil: number[] = [];

  constructor(select: TreeSelector) {
    this.#select = select;
  }

  /** Takes one sample. */
  async observe(table: ReadonlyMap<number, ProcEntry>, gpu: GpuSample | undefined): Promise<void> {
    const tick = ++this.#tick;
    const members = new Set(await this.#select(table));
    let rss = 0;
    for (const pid of members) {
      const e = table.get(pid);
      if (e === undefined) continue;
      const s = this.#seen.get(pid);
      if (s === undefined) this.#seen.set(pid, { ppid: e.ppid, cpuMs: e.cpuMs, childCpuMs: e.childCpuMs, last: tick });
      else Object.assign(s, { ppid: e.ppid, cpuMs: e.cpuMs, childCpuMs: e.childCpuMs, last: tick });
      const mem = readProcMemory(pid);
      if (mem === undefined) continue;
      rss += mem.rssBytes;
      this.#peakRss = Math.max(this.#peakRss, mem.peakRssBytes);
    }
    this.#peakRss = Math.max(this.#peakRss, rss);
    for (const [pid, s] of this.#seen) if (s.goneAt === undefined && !(members.has(pid) && table.has(pid))) s.goneAt = tick;
    if (gpu !== undefined) {
      this.#gpuAnswered = true;
      let used = 0;
      const gpus = new Set<string>();
      for (const app of gpu.apps) {
        if (!members.has(app.pid)) continue;
        used += app.usedBytes;
        gpus.add(app.gpu);
      }
      this.#gpuPeak = Math.max(this.#gpuPeak, used);
      const utils = [...gpus].flatMap((g) => (gpu.utilization.has(g) ? [gpu.utilization.get(g) as number] : []));
      if (utils.length > 0) this.#gpuUtil.push(utils.reduce((a, b) => a + b, 0) / utils.length);
    }
  }

  /** No process but `pid` (if any) was ever seen. */
  sawOnly(pid: number): boolean {
    for (const seen of this.#seen.keys()) if (seen !== pid) return false;
    return true;
  }

  /** What was measured so far. */
  result(): TreeUsage {
    let cpu = 0;
    for (const [pid, s] of this.#seen) {
      // Time of reaped children this process's cutime holds, minus the children already counted.
      let counted = 0;
      for (const c of this.#seen.values()) if (c.ppid === pid && c.goneAt !== undefined && c.goneAt <= s.last) counted += c.cpuMs + c.childCpuMs;
      cpu += s.cpuMs + Math.max(0, s.childCpuMs - counted);
    }
    const seen = this.#seen.size > 0;
    const util = this.#gpuUtil;
    return {
      wallMs: Date.now() - this.#start,
      ...(seen ? { cpuMs: Math.round(cpu), peakRssBytes: this.#peakRss } : {}),
      ...(this.#gpuAnswered ? { gpuPeakMemoryBytes: this.#gpuPeak } : {}),
      ...(util.length > 0 ? { gpuUtilizationPercent: Math.round((util.reduce((a, b) => a + b, 0) / util.length) * 10) / 10 } : {}),
      samples: this.#tick,
    };
  }
}
