/**
 * One clock for every usage meter in this process: each tick reads the process table once (and
 * asks `nvidia-smi` once, where it is on PATH) and hands the sample to every running meter, so a
 * hundred concurrent attempts cost one `/proc` scan per tick, not a hundred. The timer runs only
 * while a meter does and never keeps the process alive.
 */
import { findNvidiaSmi, sampleGpus, type GpuSample } from './gpu.js';
import { readProcTable, treeOf } from './proc-table.js';
import { SAMPLE_INTERVAL_MS, TreeMeter, type TreeSelector, type TreeUsage } from './tree-meter.js';

/** A running measurement of one attempt's processes. */
export interface UsageMeter {
  /** What was measured so far, synchronously (for a process's `exit` handler, which cannot wait). */
  peek(): TreeUsage;
  /** Takes a last sample (the processes may have exited already) and stops; what was measured. */
  stop(): Promise<TreeUsage>;
}

/** A meter, and whether it has anything to sample now. */
interface Entry {
  readonly meter: TreeMeter;
  readonly active: () => boolean;
}

const meters = new Set<Entry>();
let timer: NodeJS.Timeout | undefined;
let ticking: Promise<void> | undefined;

async function sampleAll(targets: readonly TreeMeter[]): Promise<void> {
  if (targets.length === 0) return;
  const smi = findNvidiaSmi();
  const [table, gpu] = await Promise.all([readProcTable(), smi === undefined ? undefined : sampleGpus(smi)]);
  await Promise.all(targets.map((m) => m.observe(table, gpu as GpuSample | undefined).catch(() => undefined)));
}

function tick(): void {
  // A slow tick (a loaded machine, a slow nvidia-smi) is not stacked behind by the next.
  if (ticking !== undefined) return;
  ticking = sampleAll([...meters].filter((e) => e.active()).map((e) => e.meter)).finally(() => {
    ticking = undefined;
  });
}

/**
 * Starts measuring the processes `select` picks (or `root` and its descendants and process
 * group, given a pid). Samples at once, then every {@link SAMPLE_INTERVAL_MS} while `active()`
 * says there is something to sample (a threads attempt that started no process costs no scan).
 */
export function startMeter(target: number | TreeSelector, active: () => boolean = () => true): UsageMeter {
  const meter = new TreeMeter(typeof target === 'number' ? (table) => treeOf(table, target) : target);
  const entry: Entry = { meter, active };
  meters.add(entry);
  if (timer === undefined) {
    timer = setInterval(tick, SAMPLE_INTERVAL_MS);
    timer.unref();
  }
  const first = active() ? sampleAll([meter]) : Promise.resolve();
  return {
    peek: () => meter.result(),
    async stop() {
      await first;
      if (meters.delete(entry) && meters.size === 0) {
        clearInterval(timer);
        timer = undefined;
      }
      if (active()) await sampleAll([meter]);
      return meter.result();
    },
  };
}
