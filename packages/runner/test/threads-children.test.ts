/**
 * Cancelling a `threads` step stops the processes it started (issue 27): a step that started
 * `sleep 1000` children, detached children, grandchildren in the shell's group and in a new
 * session, an orphan and a child with an environment of its own, then hangs ignoring its
 * signal. Cancelled, none of them is alive 3 s later. Real processes, checked in /proc.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTask, StepSpec } from '@cairn/core';
import type { ExecutorHost, JobRequest, JobStatus } from '../src/executor/contract.js';
import { createThreadsExecutor } from '../src/executors/local.js';
import { tempDirs } from './helpers/graph.js';

const FIXTURE = new URL('./fixtures/thread-children.mjs', import.meta.url).href;
const dir = tempDirs();
const leftovers: number[] = [];
afterEach(() => {
  for (const pid of leftovers.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
});

/** Alive, and not a zombie waiting to be reaped. */
function alive(pid: number): boolean {
  try {
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z');
  } catch {
    return false;
  }
}

function job(prefix: string, signal: AbortSignal): JobRequest {
  const spec = new StepSpec({ name: 'sleepers', ref: { module: FIXTURE, export: 'spawnSleepers' }, hashAttrs: { at: prefix } });
  const outputPath = join(prefix, 'out');
  mkdirSync(outputPath, { recursive: true });
  const attemptDir = join(prefix, 'attempt');
  const logPaths = { stdout: join(attemptDir, 'stdout.log'), stderr: join(attemptDir, 'stderr.log') };
  return {
    jobKey: 'sleepers.1',
    spec,
    task: makeTask(spec, { outputPath, depPaths: {}, depResults: {}, attempt: 1 }),
    outputPath,
    finalPath: outputPath,
    resources: {},
    logPaths,
    attemptDir,
    signal,
  };
}

describe('threads executor', () => {
  it('a cancelled step leaves none of the processes it started running', async () => {
    const prefix = dir();
    let done!: (s: JobStatus) => void;
    const finished = new Promise<JobStatus>((r) => (done = r));
    const host: ExecutorHost = {
      prefix,
      client: undefined,
      logger: { info() {}, warn() {}, error() {} },
      report: (_id, status) => {
        if (status.state !== 'running' && status.state !== 'queued') done(status);
      },
    };
    const executor = createThreadsExecutor({ maxThreads: 1, cancelGraceMs: 500 });
    await executor.start(host);
    try {
      const request = job(prefix, new AbortController().signal);
      const handle = await executor.submit(request);
      const pidFile = join(request.outputPath, 'pids');
      for (let i = 0; i < 600 && !existsSync(pidFile); i++) await sleep(50);
      const pids = readFileSync(pidFile, 'utf8').trim().split('\n').map(Number);
      leftovers.push(...pids);
      expect(pids).toHaveLength(6);
      expect(pids.filter(alive)).toEqual(pids);
      await executor.cancel([handle]);
      expect(await finished).toMatchObject({ state: 'cancelled' });
      await sleep(3000);
      expect(pids.filter(alive)).toEqual([]);
    } finally {
      await executor.stop();
    }
  }, 60_000);
});
