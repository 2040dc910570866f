/**
 * Finding and stopping the processes a `threads` step started. A thread shares its runner's
 * process, so it has no process group of its own to kill as the `process` executor does. Instead,
 * each process an attempt starts carries the attempt's mark in its environment
 * (`CAIRN_THREAD_JOB=<mark>`, added in the thread by thread-job.ts), which every descendant
 * inherits, detached or not, even once orphaned. The runner finds them by scanning
 * `/proc/<pid>/environ`, and adds the descendants (by parent pid) of every process found, for
 * those that replaced their environment.
 *
 * Limits: a descendant that both replaced its environment (`env -i`, sudo) and was orphaned
 * (double fork) is not found; nor is a process of another user whose environment cannot be read;
 * nor a child started with the synchronous calls (`spawnSync`, `execSync`), which block the
 * step's thread until they end. Linux only (/proc); elsewhere nothing is found.
 */
import { randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';

/** The environment variable that marks a threads attempt's processes. */
export const CHILD_MARK_ENV = 'CAIRN_THREAD_JOB';

/** A new mark for one attempt. */
export function newChildMark(): string {
  return `${process.pid}-${randomUUID()}`;
}

/** The parent pid of `pid` (field 4 of /proc/<pid>/stat), or undefined when gone. */
async function parentOf(pid: number): Promise<number | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, 'latin1').catch(() => undefined);
  if (stat === undefined) return undefined;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[1]);
}

/** The live processes carrying `mark`, and their descendants. */
export async function markedProcesses(mark: string): Promise<number[]> {
  const needle = Buffer.from(`${CHILD_MARK_ENV}=${mark}\0`);
  const names = await readdir('/proc').catch(() => [] as string[]);
  const parents = new Map<number, number>();
  const found = new Set<number>();
  await Promise.all(
    names.map(async (name) => {
      const pid = Number(name);
      if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return;
      const [env, ppid] = await Promise.all([readFile(`/proc/${pid}/environ`).catch(() => undefined), parentOf(pid)]);
      if (ppid !== undefined) parents.set(pid, ppid);
      if (env?.includes(needle)) found.add(pid);
    }),
  );
  // Descendants of a marked process that replaced their environment.
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, ppid] of parents) {
      if (!found.has(pid) && found.has(ppid)) {
        found.add(pid);
        grew = true;
      }
    }
  }
  return [...found];
}

/** Sends `signal` to every process carrying `mark` (and their descendants); the number signalled. */
export async function signalMarked(mark: string, signal: NodeJS.Signals): Promise<number> {
  let n = 0;
  for (const pid of await markedProcesses(mark)) {
    try {
      process.kill(pid, signal);
      n++;
    } catch {
      // Gone meanwhile, or not ours to signal.
    }
  }
  return n;
}
