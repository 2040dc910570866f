/**
 * The pure parts of usage sampling, by table: `/proc/<pid>/stat` lines (command names with
 * spaces and parentheses), process trees (descendants and the process group), the CPU
 * accounting of children a parent reaped, and nvidia-smi's CSV.
 */
import { describe, expect, it } from 'vitest';
import { parseStat, treeOf, type ProcEntry } from '../src/usage/proc-table.js';
import { parseGpuSample } from '../src/usage/gpu.js';
import { TreeMeter } from '../src/usage/tree-meter.js';

/** A stat line with `utime stime cutime cstime` in ticks (10 ms). */
const stat = (pid: number, comm: string, ppid: number, pgrp: number, t: [number, number, number, number]) =>
  `${pid} (${comm}) S ${ppid} ${pgrp} ${pgrp} 0 -1 4194560 100 0 0 0 ${t.join(' ')} 20 0 1 0 100 1000000 250 18446744073709551615`;

describe('parseStat', () => {
  it.each([
    ['plain', 'node', { ppid: 1, pgrp: 10, cpuMs: 30, childCpuMs: 70 }],
    ['a name with spaces and parentheses', 'a) (b c', { ppid: 1, pgrp: 10, cpuMs: 30, childCpuMs: 70 }],
  ])('%s', (_, comm, want) => {
    expect(parseStat(10, stat(10, comm, 1, 10, [1, 2, 3, 4]))).toEqual({ pid: 10, ...want });
  });
  it('is undefined for text that is not a stat line', () => {
    expect(parseStat(1, 'garbage')).toBeUndefined();
  });
});

const entry = (pid: number, ppid: number, pgrp: number, cpuMs = 0, childCpuMs = 0): ProcEntry => ({ pid, ppid, pgrp, cpuMs, childCpuMs });

describe('treeOf', () => {
  const table = new Map([entry(1, 0, 1), entry(10, 1, 10), entry(11, 10, 10), entry(12, 11, 12), entry(13, 1, 10), entry(20, 1, 20)].map((e) => [e.pid, e]));
  it('holds the root, its descendants (in any group) and its group (orphans too)', () => {
    expect([...treeOf(table, 10)].sort((a, b) => a - b)).toEqual([10, 11, 12, 13]);
  });
  it('keeps the group once the root is gone', () => {
    const gone = new Map(table);
    gone.delete(10);
    expect([...treeOf(gone, 10)].sort((a, b) => a - b)).toEqual([11, 12, 13]);
  });
});

describe('TreeMeter CPU accounting', () => {
  it('counts a reaped child once: its own samples, plus what its parent waited for after its last sample', async () => {
    const m = new TreeMeter((t) => t.keys());
    // Sample 1: parent 10 (100 ms), child 11 (300 ms).
    await m.observe(new Map([[10, entry(10, 1, 10, 100)], [11, entry(11, 10, 10, 300)]]), undefined);
    // Sample 2: the child ended with 450 ms and was reaped: the parent's cutime holds all of it.
    await m.observe(new Map([[10, entry(10, 1, 10, 120, 450)]]), undefined);
    expect(m.result().cpuMs).toBe(120 + 300 + 150);
  });
  it('counts a child never seen (shorter than an interval) through its parent', async () => {
    const m = new TreeMeter((t) => t.keys());
    await m.observe(new Map([[10, entry(10, 1, 10, 100, 0)]]), undefined);
    await m.observe(new Map([[10, entry(10, 1, 10, 100, 80)]]), undefined);
    expect(m.result().cpuMs).toBe(180);
  });
});

describe('parseGpuSample', () => {
  it('reads pids, MiB and GPU UUIDs, and skips [N/A] rows', () => {
    const s = parseGpuSample([['42', '1024', 'GPU-a'], ['[N/A]', '5', 'GPU-a'], ['43', '[N/A]', 'GPU-b']], [['GPU-a', '55'], ['GPU-b', '[N/A]']]);
    expect(s.apps).toEqual([{ pid: 42, usedBytes: 1024 * 2 ** 20, gpu: 'GPU-a' }]);
    expect([...s.utilization]).toEqual([['GPU-a', 55]]);
  });
  it('gives no GPU fields to a meter whose processes hold no GPU memory, but the memory is measured (0)', async () => {
    const m = new TreeMeter(() => [10]);
    await m.observe(new Map([[10, entry(10, 1, 10)]]), parseGpuSample([['99', '10', 'GPU-a']], [['GPU-a', '70']]));
    expect(m.result()).toMatchObject({ gpuPeakMemoryBytes: 0 });
    expect(m.result()).not.toHaveProperty('gpuUtilizationPercent');
  });
});
