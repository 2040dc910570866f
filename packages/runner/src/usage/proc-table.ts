/**
 * One read of the process table (Linux `/proc`): for every process, its parent, process group,
 * CPU times and resident memory. The usage meters (tree-meter.ts) pick the processes of one
 * attempt out of it. Elsewhere (no `/proc`) the table is empty and nothing is measured.
 */
import { closeSync, openSync, readdirSync, readSync } from 'node:fs';

/** Clock ticks per second of `/proc/<pid>/stat` times (`USER_HZ`: 100 on every Linux ABI Node runs on). */
const TICKS_PER_SECOND = 100;

/** One process as `/proc/<pid>/stat` shows it. */
export interface ProcEntry {
  /** Process id. */
  readonly pid: number;
  /** Parent process id. */
  readonly ppid: number;
  /** Process group id. */
  readonly pgrp: number;
  /** CPU time the process itself used, user + system (ms). */
  readonly cpuMs: number;
  /** CPU time of its children it has waited for (and of theirs), user + system (ms). */
  readonly childCpuMs: number;
}

/** Resident memory of one process (`/proc/<pid>/status`). */
export interface ProcMemory {
  /** Resident set now (`VmRSS`, bytes). */
  readonly rssBytes: number;
  /** Peak resident set so far (`VmHWM`, bytes). */
  readonly peakRssBytes: number;
}

/** Parses `/proc/<pid>/stat` text; undefined when it is not one. */
export function parseStat(pid: number, text: string): ProcEntry | undefined {
  // The command name (field 2) may hold spaces and parentheses: fields start after the last ')'.
  const close = text.lastIndexOf(')');
  if (close < 0) return undefined;
  const f = text.slice(close + 2).split(' ');
  const n = (i: number) => Number(f[i]);
  const tick = 1000 / TICKS_PER_SECOND;
  const entry = { pid, ppid: n(1), pgrp: n(2), cpuMs: (n(11) + n(12)) * tick, childCpuMs: (n(13) + n(14)) * tick };
  return Number.isFinite(entry.ppid) && Number.isFinite(entry.cpuMs) && Number.isFinite(entry.childCpuMs) ? entry : undefined;
}

/** One `stat` file's text fits (the fields after the 16-byte command name take ~300 bytes), and a `status` file's (~1.5 KiB). */
const statBuffer = Buffer.allocUnsafe(4096);

/**
 * Every process now, by pid (a process that ends during the read is left out). Read
 * synchronously, open/read/close per process into one buffer: `/proc` files are made by the
 * kernel from memory and never wait on a disk, and each promise-based read (a file handle, an
 * fstat and two reads on libuv's pool) cost ~20x the CPU of these three syscalls. A command step
 * that runs `true` samples the table twice: 45 ms of the runner's CPU per step with 150 processes
 * on the host (tools/bench/command.bench.mjs --cpu, row "local, 1 at a time").
 */
export async function readProcTable(): Promise<Map<number, ProcEntry>> {
  const table = new Map<number, ProcEntry>();
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return table;
  }
  for (const name of names) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid <= 0) continue;
    const text = readStat(name);
    const entry = text === undefined ? undefined : parseStat(pid, text);
    if (entry !== undefined) table.set(pid, entry);
  }
  return table;
}

/** One process's entry now; undefined when it is gone (or there is no `/proc`). */
export function readProcEntry(pid: number): ProcEntry | undefined {
  const text = readStat(String(pid));
  return text === undefined ? undefined : parseStat(pid, text);
}

/** `/proc/<pid>/stat`'s text; undefined when the process is gone. */
function readStat(pid: string): string | undefined {
  return readProcFile(`/proc/${pid}/stat`);
}

/** A `/proc` file's text (up to the buffer's 4 KiB: `stat` and `status` fit); undefined when its process is gone. */
function readProcFile(path: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return undefined;
  }
  try {
    const n = readSync(fd, statBuffer, 0, statBuffer.length, 0);
    return statBuffer.toString('latin1', 0, n);
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** A process's resident memory; undefined when it is gone (or a zombie, which has none). Read as the stat files are (readProcTable). */
export function readProcMemory(pid: number): ProcMemory | undefined {
  const text = readProcFile(`/proc/${pid}/status`);
  if (text === undefined) return undefined;
  const kb = (key: string) => {
    const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text);
    return m === null ? undefined : Number(m[1]) * 1024;
  };
  const rss = kb('VmRSS');
  if (rss === undefined) return undefined;
  return { rssBytes: rss, peakRssBytes: kb('VmHWM') ?? rss };
}

/** `root` and every process below it in `table` (by parent), plus the members of its process group. */
export function treeOf(table: ReadonlyMap<number, ProcEntry>, root: number): Set<number> {
  const found = new Set<number>();
  if (table.has(root)) found.add(root);
  for (const e of table.values()) if (e.pgrp === root) found.add(e.pid);
  const children = new Map<number, number[]>();
  for (const e of table.values()) {
    const list = children.get(e.ppid);
    if (list === undefined) children.set(e.ppid, [e.pid]);
    else list.push(e.pid);
  }
  const queue = [...found];
  while (queue.length > 0) {
    for (const c of children.get(queue.pop() as number) ?? []) {
      if (!found.has(c)) {
        found.add(c);
        queue.push(c);
      }
    }
  }
  return found;
}
