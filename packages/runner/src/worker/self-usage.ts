/**
 * A worker that measures itself: where no runner can watch its process tree from the same host
 * (a job on a Slurm or SGE node, a step an SSH wrapper started), the job's wrapper sets
 * {@link USAGE_SAMPLE_ENV} to the executor's name and `CAIRN_USAGE_FILE` to the attempt's
 * `usage.json`. The worker then samples its own tree (itself, its process group and its
 * descendants: usage/tree-meter.ts) while the step runs, and at its exit writes that, with its
 * own exact CPU time (plus that of the children it waited for, `/proc/self/stat` fields 16–17)
 * and peak RSS, and its exit code. A worker killed by SIGKILL (the OOM killer) writes nothing.
 */
import { readFileSync } from 'node:fs';
import { startMeter } from '../usage/sampler.js';
import { treeUsageFields, writeUsage, type AttemptUsage } from '../executors/usage.js';
import { dirname } from 'node:path';

/** Set (to the executor's name) by a job wrapper that wants the worker to measure itself. */
export const USAGE_SAMPLE_ENV = 'CAIRN_USAGE_SAMPLE';
/** The `usage.json` a self-measuring worker writes. */
export const USAGE_FILE_ENV = 'CAIRN_USAGE_FILE';

/** CPU time of the children this process waited for (ms), from `/proc/self/stat`; 0 where unknown. */
function waitedChildrenCpuMs(): number {
  try {
    const f = readFileSync('/proc/self/stat', 'latin1').split(')').pop()!.trim().split(' ');
    const ms = (Number(f[13]) + Number(f[14])) * 10;
    return Number.isFinite(ms) ? ms : 0;
  } catch {
    return 0;
  }
}

/** Starts measuring this process when its wrapper asked for it (no-op otherwise). */
export function measureSelfIfAsked(): void {
  const executor = process.env[USAGE_SAMPLE_ENV];
  const file = process.env[USAGE_FILE_ENV];
  if (!executor || !file || !file.endsWith('/usage.json')) return;
  const meter = startMeter(process.pid);
  process.on('exit', (code) => {
    const tree = treeUsageFields(meter.peek());
    const own = process.resourceUsage();
    const exactCpu = (own.userCPUTime + own.systemCPUTime) / 1000 + waitedChildrenCpuMs();
    const usage: AttemptUsage = {
      executor,
      ...tree,
      cpuMs: Math.round(Math.max(exactCpu, tree.cpuMs ?? 0)),
      cpuScope: 'tree',
      peakMemoryBytes: Math.max(own.maxRSS * 1024, tree.peakMemoryBytes ?? 0),
      memoryKind: 'rss',
      memoryScope: 'tree',
      exitCode: code,
      signal: null,
    };
    writeUsage(dirname(file), usage);
  });
}
