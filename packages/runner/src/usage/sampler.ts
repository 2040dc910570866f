/**
 * One clock for every usage meter in this process: each tick reads the process table once (and
 * asks `nvidia-smi` once, where it is on PATH) and hands the sample to every running meter, so a
 * hundred concurrent attempts cost one `/proc` scan per tick, not a hundred. The timer runs only
 * while a meter does and never keeps the process alive.
 */
import { findNvidiaSmi, sampleGpus, type GpuSample } from './gpu.js';
import { type ProcEntry, readProcEntry, readProcTable, treeOf } from './proc-table.js';
import { SAMPLE_INTERVAL_MS, TreeMeter, type TreeSelector, type TreeUsage } from './tree-meter.js';

/** A running measurement of one attempt's processes. */
export interface UsageMeter {
  /** What was measured so far, synchronously (for a process's `exit` handler, which cannot wait). */
  peek(): TreeUsage;
  /**
   * Takes a last sample (the processes may have exited already) and stops; what was measured.
   * `groupGone`: the target pid's process group is known to be empty (its leader reaped, a signal
   * to the group found nothing), so unless the meter saw a process other than the target (which
   * may have left the group), a last sample could find nothing and none is taken.
   */
  stop(groupGone?: boolean): Promise<TreeUsage>;
}

/** A meter, and whether it has anything to sample now. */
interface Entry {
  readonly meter: TreeMeter;
  readonly active: () => boolean;
}

const meters = new Set<Entry>();
let timer: NodeJS.Timeout | undefined;
let ticking: Promise<void> | undefined;

/** Samples `targets`; `only`: a pid whose own entry is the whole table (a process started just now). */
async function sampleAll(targets: readonly TreeMeter[], only?: number): Promise<void> {
  if (targets.length === 0) return;
  const smi = findNvidiaSmi();
  const [table, gpu] = await Promise.all([only === undefined ? readProcTable() : ownEntry(only), smi === undefined ? undefined : sampleGpus(smi)]);
  await Promise.all(targets.map((m) => m.observe(table, gpu as GpuSample | undefined).catch(() => undefined)));
}

function tick(): void {
  // A slow tick (a loaded machine, a slow nvidia-smi) is not stacked behind by the next.
  if (ticking !== undefined) return;
  ticking = sampleAll([...meters].filter((e) => e.active()).map((e) => e.meter)).finally(() => {
    ticking = undefined;
  });
}

/** A table of one process: `pid`'s entry, when it is still there. */
function ownEntry(pid: number): Map<number, ProcEntry> {
  const table = new Map<number, ProcEntry>();
  const e = readProcEntry(pid);
  if (e !== undefined) table.set(pid, e);
  return table;
}

/**
 * Starts measuring the processes `select` picks (or, given the pid of a process started just
 * now, it and its descendants and process group). Samples at once, then every
 * {@link SAMPLE_INTERVAL_MS} while `active()` says there is something to sample (a threads
 * attempt that started no process costs no scan). A pid's first sample reads its own entry
 * only, not the whole table: nothing below a process started just now has started yet (a
 * `true` command step's two table scans were most of its runner CPU; bench row "local, 1 at a
 * time" of tools/bench/command.bench.mjs).
 */
export function startMeter(target: number | TreeSelector, active: () => boolean = () => true): UsageMeter {
  const meter = new TreeMeter(typeof target === 'number' ? (table) => treeOf(table, target) : target);
  const entry: Entry = { meter, active };
  meters.add(entry);
  if (timer === undefined) {
    timer = setInterval(tick, SAMPLE_INTERVAL_MS);
    timer.unref();
  }
  const first = active() ? sampleAll([meter], typeof target === 'number' ? target : undefined) : Promise.resolve();
  return {
    peek: () => meter.result(),
    async stop(groupGone = false) {
      await first;
      if (meters.delete(entry) && meters.size === 0) {
        clearInterval(timer);
        timer = undefined;
      }
      const nothingLeft = groupGone && typeof target === 'number' && meter.sawOnly(target);
      if (active() && !nothingLeft) await sampleAll([meter]);
      return meter.result();
    },
  };
}
