import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync, rmSync, utimesSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { StepSpec, hasCode } from '@cairn/core';
import { StepRunError, StepRunner, isStale, type RunnerEvent } from '../src/index.js';
import { pidNamespace, processStartTime } from '../src/store/leases.js';
import { leaseFile } from '../src/store/local/layout.js';
import { Graph, memoryLogger, tempDirs } from './helpers/graph.js';

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});
const dir = tempDirs();
function sleeper(): ChildProcess {
  const child = spawn('sleep', ['30'], { stdio: 'ignore' });
  cleanups.push(() => child.kill('SIGKILL'));
  return child;
}
function writeLease(path: string, holder: Record<string, unknown>): void {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(leaseFile(path), JSON.stringify({ worker_id: 'other', runId: 'other', token: 'other.1', ...holder }));
  // A holder rewrites its lease on each refresh: the file's time is its last refresh.
  const at = holder.timestamp as number;
  if (at < Date.now() / 1000) utimesSync(leaseFile(path), at, at);
}
const now = () => Date.now() / 1000;

describe('leases', () => {
  it('takes over a lease whose holder stopped refreshing it', async () => {
    const prefix = dir();
    const g = new Graph().step('a');
    writeLease(g.get('a').outputPath(prefix), { host: 'elsewhere', pid: 1, processStartTime: null, timestamp: now() - 3600 });
    await new StepRunner({ prefix, logger: memoryLogger() }).run(g.pick('a'));
    expect(g.calls).toEqual(['a']);
    expect(existsSync(leaseFile(g.get('a').outputPath(prefix)))).toBe(false);
  });

  it('recognises a dead holder on this host at once (pid gone)', async () => {
    const prefix = dir();
    const child = spawn('true');
    await new Promise((r) => child.on('exit', r));
    const g = new Graph().step('a');
    writeLease(g.get('a').outputPath(prefix), { host: hostname(), pid: child.pid, processStartTime: 1, pidNs: pidNamespace(), timestamp: now() });
    await new StepRunner({ prefix, logger: memoryLogger(), leases: { pollMs: 60_000 } }).run(g.pick('a'));
    expect(g.calls).toEqual(['a']);
  });

  it('recognises a reused pid by its process start time', () => {
    const child = sleeper();
    const start = processStartTime(child.pid as number);
    const fresh = { worker_id: 'x', timestamp: now(), host: hostname(), pid: child.pid as number, pidNs: pidNamespace(), runId: 'r', token: 't' };
    const info = (processStartTime: number | null) => ({ holder: { ...fresh, processStartTime }, raw: '', mtimeMs: Date.now() });
    expect(isStale(info(start), 90_000)).toBe(false);
    expect(isStale(info((start ?? 0) + 1), 90_000)).toBe(true);
    expect(isStale({ holder: null, raw: '', mtimeMs: Date.now() }, 90_000)).toBe(false);
    expect(isStale({ holder: null, raw: '', mtimeMs: Date.now() - 100_000 }, 90_000)).toBe(true);
  });

  it('waits on a live foreign lease without holding a slot, then counts the step built by the other runner', async () => {
    const prefix = dir();
    const child = sleeper();
    const g = new Graph().step('shared').step('independent');
    const path = g.get('shared').outputPath(prefix);
    writeLease(path, { host: hostname(), pid: child.pid, processStartTime: processStartTime(child.pid as number), timestamp: now() });
    const events: RunnerEvent[] = [];
    const r = new StepRunner({ prefix, maxConcurrent: 1, leases: { pollMs: 20 }, onEvent: (e) => events.push(e) });
    const p = r.run(g.pick('shared', 'independent'));
    while (!g.calls.includes('independent')) await new Promise((res) => setTimeout(res, 5));
    expect(events.some((e) => e.type === 'step' && e.step === 'shared' && e.state === 'waiting-lease')).toBe(true);
    // The other runner finishes.
    mkdirSync(path, { recursive: true });
    writeFileSync(join(path, '.artifact.json'), JSON.stringify({ cairn: 1, name: 'shared', nameWithHash: g.get('shared').nameWithHash, outputPath: path }));
    writeFileSync(join(path, '.executor_status'), 'SUCCESS');
    rmSync(leaseFile(path));
    const summary = await p;
    expect(g.calls).toEqual(['independent']);
    expect(summary.outcome(g.get('shared'))?.state).toBe('skipped');
  });

  it('aborts a step whose lease was taken over, and records nothing', async () => {
    const prefix = dir();
    let sawAbort: unknown;
    const spec = new StepSpec({
      name: 'victim',
      fn: (out, ctx) =>
        new Promise<void>((resolve) => {
          // Another runner steals the lease.
          writeLease(spec.outputPath(prefix), { host: 'thief', pid: 1, processStartTime: null, timestamp: now(), token: 'thief.1' });
          writeFileSync(join(out, 'mine'), 'written by the victim');
          ctx.signal.addEventListener('abort', () => {
            sawAbort = ctx.signal.reason;
            resolve();
          });
        }),
    });
    const err = (await new StepRunner({ prefix, logger: memoryLogger(), leases: { heartbeatMs: 10 } }).run([spec]).catch((e: unknown) => e)) as StepRunError;
    expect(err).toBeInstanceOf(StepRunError);
    expect(hasCode(err.failures[0]?.error, 'CAIRN_LEASE_LOST')).toBe(true);
    expect(hasCode(sawAbort, 'CAIRN_LEASE_LOST')).toBe(true);
    const path = spec.outputPath(prefix);
    expect(existsSync(path)).toBe(false); // nothing of the victim's attempt was published
    expect(JSON.parse(readFileSync(leaseFile(path), 'utf8')).host).toBe('thief');
  });
});
