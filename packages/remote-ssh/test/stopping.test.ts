// Remote steps stop when told, and one job dir never runs two copies (issue 27): cancel through a
// fresh connection when the step's own is dead on the host, a watchdog on the host that stops a job
// whose runner is gone, a lock per job dir, and live logs while the step runs.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hasCode, StepSpec } from '@cairn/core';
import { StepRunner } from '@cairn/runner';
import type { JobHandle, JobRequest } from '@cairn/runner/executor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSshExecutor, type SshExecutorOptions, type SshJobInfo } from '../src/index.js';
import { alive, FIXTURES, hostOf, jobFor, Recorder, removeScratch, scratch, sshdOrSkip, startSshd, until, type SshdInstance } from './helpers.js';

const run = sshdOrSkip();
const info = (h: JobHandle) => h.info as unknown as SshJobInfo;
const quiet = { info() {}, warn() {}, error() {} };

/** The pids `marked` steps wrote (`started <pid> <child>` per start). */
function starts(marker: string): number[][] {
  if (!existsSync(marker)) return [];
  return readFileSync(marker, 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('started '))
    .map((l) => l.split(' ').slice(1).map(Number));
}
const anyAlive = (marker: string) => starts(marker).some((ps) => ps.some(alive));

describe.runIf(run)('SSH executor: stopping remote work', () => {
  let a: SshdInstance;
  const markers: string[] = [];
  beforeAll(async () => {
    a = await startSshd();
  });
  afterAll(async () => {
    for (const m of markers) for (const ps of starts(m)) for (const p of ps) if (alive(p)) process.kill(p, 'SIGKILL');
    await a?.stop();
    removeScratch();
  });

  async function executor(extra: Partial<SshExecutorOptions> = {}, prefix = scratch()) {
    const rec = new Recorder(prefix);
    const ex = createSshExecutor({ hosts: [hostOf(a, 'a')], pollIntervalMs: 50, cancelGraceMs: 1000, worker: 'never', ...extra });
    await ex.start(rec);
    return { ex, rec, prefix };
  }

  function markerFile(): string {
    const m = join(scratch(), 'marker');
    markers.push(m);
    return m;
  }

  it('cancel reaches the job when the sshd session of its channel was killed, even when the executor stops right after', async () => {
    const { ex, prefix } = await executor();
    const marker = markerFile();
    const h = await ex.submit(jobFor(prefix, 'marked', { resources: { hints: { marker } } }));
    await until('the step to start', () => starts(marker).length === 1);
    a.killSessions(); // the step's channel and connection die on the host
    // What the runner does on Ctrl-C or timeoutMs: cancel without waiting, then stop the executor.
    void ex.cancel([h]);
    await ex.stop();
    await until('the remote process group to be gone', () => !anyAlive(marker) && !alive(info(h).pid as number), 10_000);
  });

  it('Ctrl-C to a runner process stops its remote step before the process exits', async () => {
    const prefix = scratch();
    const marker = markerFile();
    const script = fileURLToPath(new URL('./fixtures/sigint-child.mjs', import.meta.url));
    const child = spawn(process.execPath, [script, prefix, JSON.stringify([hostOf(a, 'a')]), marker], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    await until('the step to start', () => starts(marker).length === 1, 30_000);
    child.kill('SIGINT');
    await exited;
    expect(stderr).toContain('ended CAIRN_CANCELLED');
    await until('the remote step to be gone', () => !anyAlive(marker), 10_000);
  }, 60_000);

  it('timeoutMs stops the remote step; the next run runs exactly one copy', async () => {
    const prefix = scratch();
    const marker = markerFile();
    const step = () => new StepSpec({ name: 'marked', executor: 'ssh', ref: { module: FIXTURES, export: 'marked' }, timeoutMs: 2000, resources: { cpu: 1, hints: { marker } } });
    const mk = () => createSshExecutor({ hosts: [hostOf(a, 'a')], pollIntervalMs: 50, cancelGraceMs: 1000, worker: 'never' });
    await expect(new StepRunner({ prefix, executors: [mk()], logger: quiet }).run([step()], { handleSigint: false })).rejects.toThrow(/timeout/);
    expect(starts(marker)).toHaveLength(1);
    await until('the timed-out step to be gone on the host', () => !anyAlive(marker), 10_000);
    writeFileSync(`${marker}.quick`, '');
    const summary = await new StepRunner({ prefix, executors: [mk()], logger: quiet }).run([step()], { handleSigint: false });
    expect(summary.counts).toEqual({ succeeded: 1 });
    expect(starts(marker)).toHaveLength(2);
    expect(anyAlive(marker)).toBe(false);
  }, 60_000);

  it('a second start in a live job dir adopts the same task and refuses another one (CAIRN_REMOTE_BUSY); never a second copy', async () => {
    const first = await executor();
    const marker = markerFile();
    const req = jobFor(first.prefix, 'marked', { resources: { hints: { marker } } });
    const h1 = await first.ex.submit(req);
    await until('the step to start', () => starts(marker).length === 1);

    const second = await executor({}, first.prefix);
    const same: JobRequest = { ...req, signal: new AbortController().signal };
    const h2 = await second.ex.submit(same);
    expect(info(h2).pid).toBe(info(h1).pid);
    const other: JobRequest = { ...req, task: { ...req.task, attempt: 7 }, signal: new AbortController().signal };
    const third = await executor({}, first.prefix);
    const h3 = await third.ex.submit(other);
    const refused = await third.rec.done(h3.jobId);
    expect(refused.state).toBe('failed');
    expect(hasCode(refused.error, 'CAIRN_REMOTE_BUSY')).toBe(true);
    expect((refused.error as Error).message).toContain(`pid ${info(h1).pid}`);
    // Still one copy.
    await new Promise((r) => setTimeout(r, 500));
    expect(starts(marker)).toHaveLength(1);

    await first.ex.cancel([h1]);
    expect((await first.rec.done(h1.jobId)).state).toBe('cancelled');
    expect(anyAlive(marker)).toBe(false);
    await Promise.all([first.ex.stop(), second.ex.stop(), third.ex.stop()]);
  });

  it('the watchdog on the host stops a job whose runner is gone for orphanGraceMs; an adopter within the grace keeps it', async () => {
    // Gone for good: the connection dies and the executor stops without cancelling (a killed runner).
    const { ex, prefix } = await executor({ orphanGraceMs: 2000 });
    const marker = markerFile();
    const h = await ex.submit(jobFor(prefix, 'marked', { resources: { hints: { marker } } }));
    await until('the step to start', () => starts(marker).length === 1);
    a.killSessions();
    await ex.stop();
    await new Promise((r) => setTimeout(r, 500));
    expect(anyAlive(marker)).toBe(true); // survives a dropped connection (adoption needs it)
    await until('the watchdog to stop the orphan', () => !anyAlive(marker) && !alive(info(h).pid as number), 15_000);
    expect(readFileSync(join(info(h).jobDir as string, 'watchdog'), 'utf8')).toMatch(/no runner/);

    // Adopted within the grace: the adopter's status checks keep it alive past the grace.
    const e1 = await executor({ orphanGraceMs: 2000 });
    const job = jobFor(e1.prefix, 'sleeper', { resources: { hints: { sleepMs: 5000 } } });
    const hs = await e1.ex.submit(job);
    a.killSessions();
    await e1.ex.stop();
    const persisted = JSON.parse(JSON.stringify(hs)) as JobHandle;
    const e2 = await executor({ orphanGraceMs: 2000 }, e1.prefix);
    expect(await e2.ex.adopt!(persisted)).not.toBeNull();
    expect(await e2.rec.done(hs.jobId, 30_000)).toMatchObject({ state: 'succeeded', result: 'slept' });
    await e2.ex.stop();
  }, 60_000);

  it('the persistent worker stops a step whose runner is gone for orphanGraceMs, and lives on', async () => {
    const { ex, prefix } = await executor({ worker: 'always', orphanGraceMs: 2000 });
    const marker = markerFile();
    const h = await ex.submit(jobFor(prefix, 'marked', { resources: { hints: { marker } } }));
    await until('the step to start', () => starts(marker).length === 1);
    const [[workerPid, child]] = starts(marker) as [[number, number]];
    expect(info(h).runsIn).toBe('worker');
    a.killSessions();
    await ex.stop();
    await until('the watchdog to stop the orphaned step', () => existsSync(join(info(h).jobDir as string, 'exit')) && !alive(child), 15_000);
    expect(readFileSync(join(info(h).jobDir as string, 'exit'), 'utf8').trim()).toBe('143');
    expect(readFileSync(join(info(h).jobDir as string, 'watchdog'), 'utf8')).toMatch(/no runner/);
    expect(alive(workerPid)).toBe(true); // other steps and runners keep their worker
  }, 30_000);

  it.each(['never', 'always'] as const)('streams a running step’s stdout and stderr to the local log files while it runs (worker: %s)', async (worker) => {
    const { ex, rec, prefix } = await executor({ worker });
    const req = jobFor(prefix, 'ticker', { resources: { hints: { ticks: 15 } } });
    const h = await ex.submit(req);
    const read = (p: string) => (existsSync(p) ? readFileSync(p, 'utf8') : '');
    await until('the first ticks in the local log', () => read(req.logPaths.stdout).includes('tick 2') && read(req.logPaths.stderr).includes('etick 2'), 15_000);
    expect(rec.terminal(h.jobId)).toBeUndefined(); // seen while the step still runs
    const grown = read(req.logPaths.stdout).length;
    expect((await rec.done(h.jobId)).state).toBe('succeeded');
    const out = read(req.logPaths.stdout);
    expect(out.length).toBeGreaterThan(grown);
    expect(out).toBe(Array.from({ length: 15 }, (_, i) => `tick ${i}\n`).join(''));
    // (stderr may also hold the worker entry's own notes, such as the native module's fallback)
    expect(read(req.logPaths.stderr).split('\n').filter((l) => l.startsWith('etick'))).toEqual(Array.from({ length: 15 }, (_, i) => `etick ${i}`));
    expect(info(h).runsIn).toBe(worker === 'never' ? 'detached' : 'worker');
    await ex.stop();
  }, 30_000);
});
