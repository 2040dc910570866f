/**
 * The threads executor's pool entry (built to `dist/thread-job.js`): runs one attempt
 * (worker/thread-worker.ts) with every process it starts marked as the attempt's, so the runner
 * can stop them when the attempt is cancelled or ends (marked-processes.ts).
 *
 * The mark is added where Node starts every asynchronous child (`spawn`, `exec`, `execFile`,
 * `fork` all go through `ChildProcess.prototype.spawn`, with the environment already listed in
 * `envPairs`), so it is there even when the step passes an `env` of its own. The patch is this
 * thread's alone: each worker thread has its own copy of Node's modules.
 */
import { ChildProcess } from 'node:child_process';
import runThreadTask, { type ThreadTaskMessage } from '../worker/thread-worker.js';
import { CHILD_MARK_ENV } from './marked-processes.js';

/** What the threads executor sends for one attempt. */
export interface ThreadJobMessage extends ThreadTaskMessage {
  /** The attempt's mark (`CAIRN_THREAD_JOB`), put in the environment of every process it starts. */
  readonly childMark: string;
  /** Shared with the runner: element 0 counts the processes the attempt started (no scan when none). */
  readonly spawned: Int32Array;
}

/** The attempt this thread runs now (one at a time). */
let current: ThreadJobMessage | undefined;

interface SpawnOptions {
  envPairs?: string[];
}
const proto = ChildProcess.prototype as unknown as { spawn(this: ChildProcess, options: SpawnOptions): unknown };
const original = proto.spawn;
const prefix = `${CHILD_MARK_ENV}=`;
proto.spawn = function spawnMarked(this: ChildProcess, options: SpawnOptions) {
  const job = current;
  if (job !== undefined && options !== null && typeof options === 'object' && Array.isArray(options.envPairs)) {
    options.envPairs = [...options.envPairs.filter((p) => !p.startsWith(prefix)), `${prefix}${job.childMark}`];
    Atomics.add(job.spawned, 0, 1);
  }
  return original.call(this, options);
};

/** Runs one attempt; resolves with `encodeResult` bytes. */
export default async function runThreadJob(msg: ThreadJobMessage): Promise<Uint8Array> {
  current = msg;
  try {
    return await runThreadTask(msg);
  } finally {
    current = undefined;
  }
}
