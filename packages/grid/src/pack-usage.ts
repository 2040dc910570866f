/**
 * What one step of a packed Node task used, measured by the pack worker itself (it runs its
 * task's steps one after another in one process, so no outside sampler can tell them apart):
 * the worker's CPU time over the step plus the subprocesses the step started (sampled from
 * `/proc`: the worker's descendants, all the running step's, since one step runs at a time), their
 * peak RSS and GPU use, written to the step's `usage.json` before its exit-code file. The
 * worker's own peak RSS is its lifetime peak (earlier steps of the task included), and says so.
 * Only when the wrapper asks (`CAIRN_USAGE_SAMPLE`, the scheduler's name).
 */
import { writeFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { startMeter, treeUsageFields, USAGE_FILE, USAGE_SAMPLE_ENV, type AttemptUsage } from './runner-api.js';

/** A running measurement of one step; `finish` writes it into the step's attempt directory. */
export interface PackStepUsage {
  finish(attemptDir: string, exitCode: number | undefined): void;
}

/** This process's descendants (not itself) in a sampled process table. */
function descendants(table: ReadonlyMap<number, { readonly pid: number; readonly ppid: number }>): number[] {
  const found = new Set<number>([process.pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const e of table.values()) {
      if (!found.has(e.pid) && found.has(e.ppid)) {
        found.add(e.pid);
        grew = true;
      }
    }
  }
  found.delete(process.pid);
  return [...found];
}

/** Starts measuring the step about to run; undefined when the wrapper did not ask. */
export function measurePackStep(): PackStepUsage | undefined {
  const executor = process.env[USAGE_SAMPLE_ENV];
  if (!executor) return undefined;
  const cpu0 = process.cpuUsage();
  const meter = startMeter(descendants);
  return {
    finish(attemptDir, exitCode) {
      const children = meter.peek();
      void meter.stop();
      const own = process.cpuUsage(cpu0);
      const tree = treeUsageFields(children);
      const childCpuMs = children.cpuMs ?? 0;
      const usage: AttemptUsage = {
        executor,
        wallMs: children.wallMs,
        cpuMs: Math.round((own.user + own.system) / 1000 + childCpuMs),
        cpuScope: 'tree',
        peakMemoryBytes: process.resourceUsage().maxRSS * 1024,
        memoryKind: 'rss',
        memoryScope: 'process',
        ...(children.cpuMs !== undefined ? { childCpuMs, childPeakRssBytes: children.peakRssBytes } : {}),
        ...(tree.gpuPeakMemoryBytes !== undefined ? { gpuPeakMemoryBytes: tree.gpuPeakMemoryBytes } : {}),
        ...(tree.gpuUtilizationPercent !== undefined ? { gpuUtilizationPercent: tree.gpuUtilizationPercent } : {}),
        sampleIntervalMs: tree.sampleIntervalMs,
        note: "packed: the pack worker's CPU over the step plus its subprocesses'; peak RSS is the pack worker's lifetime peak (earlier steps of its task included)",
        ...(exitCode !== undefined ? { exitCode, signal: null } : {}),
      };
      try {
        const file = join(attemptDir, USAGE_FILE);
        writeFileSync(`${file}.${process.pid}`, JSON.stringify(usage));
        renameSync(`${file}.${process.pid}`, file);
      } catch {
        // not measured, then (the attempt directory is gone)
      }
    },
  };
}
