import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeTask, hasCode } from '@cairn/core';
import { decodeResult, type JobHandle } from '@cairn/runner/executor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSshExecutor, type SshExecutorOptions, type SshJobInfo } from '../src/index.js';
import { alive, hostOf, jobFor, Recorder, removeScratch, scratch, sshdOrSkip, startSshd, until, workerPids, type SshdInstance } from './helpers.js';

const run = sshdOrSkip();
const info = (h: JobHandle) => h.info as unknown as SshJobInfo;
const outOf = (h: JobHandle) => info(h).remoteOutputPath as string;
describe.runIf(run)('persistent worker on real sshd hosts', () => {
  let a: SshdInstance;
  let b: SshdInstance;
  beforeAll(async () => {
    [a, b] = await Promise.all([startSshd(), startSshd()]);
  });
  afterAll(async () => {
    // Removing the hosts' work dirs makes their workers exit; kill them anyway.
    const ours = workerPids([a, b].filter(Boolean).map((s) => s.dir));
    await Promise.all([a?.stop(), b?.stop()]);
    for (const pid of ours) if (alive(pid)) process.kill(pid, 'SIGKILL');
    removeScratch();
  });

  /** pollIntervalMs is long on purpose: a worker step's completion must arrive pushed, not polled. */
  async function executor(extra: Partial<SshExecutorOptions> = {}, prefix = scratch()) {
    const rec = new Recorder(prefix);
    const ex = createSshExecutor({ hosts: [hostOf(a, 'a')], pollIntervalMs: 60_000, cancelGraceMs: 500, ...extra });
    await ex.start(rec);
    return { ex, rec, prefix };
  }

  it('runs steps in one long-lived process, writing the same job dir a detached step has', async () => {
    const { ex, rec, prefix } = await executor();
    const jobs = Array.from({ length: 6 }, () => jobFor(prefix, 'whereAmI'));
    const handles = await Promise.all(jobs.map((j) => ex.submit(j)));
    const done = await Promise.all(handles.map((h) => rec.done(h.jobId)));
    const where = done.map((s) => s.result as { pid: number; threadId: number; cuda: string; jobDir: string });
    const workerPid = info(handles[0]!).pid as number;
    expect(workerPids([a.dir])).toContain(workerPid);
    handles.forEach((h, i) => {
      expect(done[i]).toMatchObject({ state: 'succeeded', exitCode: 0 });
      expect(info(h)).toMatchObject({ runsIn: 'worker', pid: workerPid });
      expect(info(h).workerDir).toMatch(/\/workers\/[0-9a-f]{16}$/);
      // In the worker's process, on a thread, with the executor's environment for this step.
      expect(where[i]).toMatchObject({ pid: workerPid, cuda: '', jobDir: info(h).jobDir });
      expect(where[i]!.threadId).toBeGreaterThan(0);
      expect(readFileSync(join(jobs[i]!.outputPath, 'where.txt'), 'utf8')).toBe('here');
      expect(readFileSync(jobs[i]!.logPaths.stdout, 'utf8')).toBe(`whereAmI ran in ${workerPid}\n`);
      // The on-disk contract of a job dir, so status checks, log following and adoption work unchanged.
      const dir = info(h).jobDir as string;
      expect(readFileSync(join(dir, 'exit'), 'utf8')).toBe('0\n');
      expect(readFileSync(join(dir, 'pid'), 'utf8').trim()).toBe(String(workerPid));
      expect(readFileSync(join(dir, 'worker'), 'utf8').trim()).toBe(info(h).workerDir);
      expect(decodeTask(readFileSync(join(dir, 'task.msgpack'))).name).toBe(jobs[i]!.spec.name);
      expect(decodeResult(readFileSync(join(dir, 'result.msgpack')))).toEqual({ ok: true, result: where[i] });
    });
    // Four steps at most at once (4 cpus): threads are reused, not one per step.
    expect(new Set(where.map((w) => w.threadId)).size).toBeLessThanOrEqual(4);
    expect(await ex.poll([handles[0]!])).toEqual(new Map([[handles[0]!.jobId, { state: 'succeeded', result: where[0], exitCode: 0 }]]));
    await ex.stop();
    // Stopping the executor leaves the worker running (its steps stay adoptable); it exits when idle.
    expect(alive(workerPid)).toBe(true);
  });

  it('pushes completions back at once (no status poll) and keeps failures and crashes inside the step', async () => {
    const { ex, rec, prefix } = await executor();
    await rec.done((await ex.submit(jobFor(prefix, 'tiny'))).jobId); // worker started and code uploaded
    const latencies: number[] = [];
    for (let i = 0; i < 8; i++) {
      const t0 = performance.now();
      const h = await ex.submit(jobFor(prefix, 'tiny'));
      expect(await rec.done(h.jobId)).toMatchObject({ state: 'succeeded', result: 1 });
      latencies.push(performance.now() - t0);
    }
    latencies.sort((x, y) => x - y);
    // The status poll runs every 60 s here: a polled completion would take that long. The bound is
    // loose on purpose (a loaded CI machine); pushed completions take milliseconds.
    expect(latencies[4]).toBeLessThan(10_000);

    const [boom, crash] = await Promise.all([ex.submit(jobFor(prefix, 'boom')), ex.submit(jobFor(prefix, 'crash'))]);
    const sb = await rec.done(boom.jobId);
    expect(sb).toMatchObject({ state: 'failed', exitCode: 1 });
    expect((sb.error as Error & { code?: string }).code).toBe('E_BOOM');
    expect((sb.error as Error & { logTail?: string }).logTail).toContain('about to fail: line 2');
    const sc = await rec.done(crash.jobId);
    expect(sc).toMatchObject({ state: 'failed', exitCode: 7 });
    expect(hasCode(sc.error, 'CAIRN_REMOTE')).toBe(true);
    expect((sc.error as Error).message).toMatch(/Step "crash-\d+" exited with code 7[\s\S]*crashing hard/);
    // process.exit() in a step ends its thread, not the worker.
    const after = await ex.submit(jobFor(prefix, 'whereAmI'));
    expect(((await rec.done(after.jobId)).result as { pid: number }).pid).toBe(info(crash).pid);
    await ex.stop();
  });

  it('a killed worker fails its running step as lost, naming the step and worker; the next step starts a new worker', async () => {
    const { ex, rec, prefix } = await executor();
    const job = jobFor(prefix, 'sleeper', { resources: { hints: { sleepMs: 30_000 } } });
    const h = await ex.submit(job);
    // Written whole (not just created) before the worker is killed: the test reads it at the end.
    await until('the sleeper to start', () => existsSync(join(outOf(h), 'pids.json')) && readFileSync(join(outOf(h), 'pids.json'), 'utf8').endsWith('}'));
    const workerPid = info(h).pid as number;
    const t0 = Date.now();
    process.kill(workerPid, 'SIGKILL');
    const st = await rec.done(h.jobId);
    // Seen when the worker channel closed, long before the next 60 s status poll.
    expect(Date.now() - t0).toBeLessThan(20_000);
    expect(st).toMatchObject({ state: 'lost', infrastructure: true });
    expect(hasCode(st.error, 'CAIRN_REMOTE')).toBe(true);
    expect(st.reason).toContain(`Step "${job.spec.name}" was running in the persistent worker on SSH host "a" (pid ${workerPid})`);
    expect(st.reason).toContain(`${info(h).workerDir}/worker.log`);
    const next = await ex.submit(jobFor(prefix, 'whereAmI'));
    const sn = await rec.done(next.jobId);
    expect(sn.state).toBe('succeeded');
    expect((sn.result as { pid: number }).pid).not.toBe(workerPid);
    expect(info(next).pid).toBe((sn.result as { pid: number }).pid);
    await ex.stop();
    // The step's subprocess was in the killed worker's process group only by inheritance: clean it up.
    const { child } = JSON.parse(readFileSync(join(outOf(h), 'pids.json'), 'utf8')) as { child: number };
    if (alive(child)) process.kill(child, 'SIGKILL');
  });

  it('cancel stops a cooperative step and its subprocesses, and terminates one that ignores its signal; the worker lives on', async () => {
    const { ex, rec, prefix } = await executor();
    const sleeper = await ex.submit(jobFor(prefix, 'sleeper'));
    const spinner = await ex.submit(jobFor(prefix, 'spin'));
    await until('both steps to start', () => existsSync(join(outOf(sleeper), 'pids.json')) && existsSync(join(outOf(spinner), 'spinning')));
    const { child } = JSON.parse(readFileSync(join(outOf(sleeper), 'pids.json'), 'utf8')) as { child: number };
    const workerPid = info(sleeper).pid as number;
    expect(alive(child)).toBe(true);
    const t0 = Date.now();
    await ex.cancel([sleeper, spinner]);
    const [s1, s2] = await Promise.all([rec.done(sleeper.jobId), rec.done(spinner.jobId)]);
    expect(s1.state).toBe('cancelled');
    expect(s2.state).toBe('cancelled');
    // The spinner never yields: it is stopped when the 500 ms grace runs out, not at a 60 s poll.
    expect(Date.now() - t0).toBeLessThan(20_000);
    expect(alive(child)).toBe(false);
    expect(readFileSync(join(info(spinner).jobDir as string, 'exit'), 'utf8')).toBe('143\n');
    const r = decodeResult(readFileSync(join(info(spinner).jobDir as string, 'result.msgpack')));
    expect(r).toMatchObject({ ok: false, error: { code: 'CAIRN_CANCELLED' } });
    expect(alive(workerPid)).toBe(true);
    const next = await ex.submit(jobFor(prefix, 'whereAmI'));
    expect(((await rec.done(next.jobId)).result as { pid: number }).pid).toBe(workerPid);
    await ex.stop();
  });

  it('a worker step survives a runner restart: adopted, followed, cancelled through the worker', async () => {
    const { ex, prefix } = await executor({ hosts: [hostOf(b, 'b')] });
    const job = jobFor(prefix, 'sleeper', { resources: { hints: { sleepMs: 1500 } } });
    const h = await ex.submit(job);
    const stuck = await ex.submit(jobFor(prefix, 'sleeper'));
    await until('the sleepers to start', () => existsSync(join(outOf(h), 'pids.json')) && existsSync(join(outOf(stuck), 'pids.json')));
    b.killSessions(); // as a dead runner or a network blip would
    await ex.stop();
    const { ex: ex2, rec: rec2 } = await executor({ hosts: [hostOf(b, 'b')], pollIntervalMs: 50 }, prefix);
    // Recorded before launch: where it runs is found from the job dir.
    const bare = JSON.parse(JSON.stringify(h)) as JobHandle;
    delete (bare.info as Partial<SshJobInfo>).runsIn;
    delete (bare.info as Partial<SshJobInfo>).pid;
    const adopted = (await ex2.adopt!(bare)) as JobHandle;
    expect(info(adopted)).toMatchObject({ runsIn: 'worker', pid: info(h).pid, workerDir: info(h).workerDir });
    const lines: string[] = [];
    for await (const l of ex2.logs!(adopted, { follow: true })) lines.push(l);
    expect(lines).toContain('sleeper started');
    expect(await rec2.done(h.jobId)).toMatchObject({ state: 'succeeded', result: 'slept' });
    expect(readFileSync(join(job.outputPath, 'done.txt'), 'utf8')).toBe('done');
    // Cancelling an adopted worker step goes through its worker, which keeps running.
    const adoptedStuck = (await ex2.adopt!(JSON.parse(JSON.stringify(stuck)) as JobHandle)) as JobHandle;
    await ex2.cancel([adoptedStuck]);
    expect((await rec2.done(stuck.jobId)).state).toBe('cancelled');
    expect(alive(info(h).pid as number)).toBe(true);
    await ex2.stop();
  });

  it('a worker that cannot start fails the step at once with a clear, typed error', async () => {
    const prefix = scratch();
    const rec = new Recorder(prefix);
    const ex = createSshExecutor({ hosts: [hostOf(a, 'bad', { nodePath: '/nonexistent/node' })], pollIntervalMs: 50 });
    await ex.start(rec);
    // Failed when the channel closed (exit 4), not after a start timeout: the bound is loose for a loaded CI machine.
    const t0 = Date.now();
    const h = await ex.submit(jobFor(prefix, 'tiny'));
    const st = await rec.done(h.jobId);
    expect(Date.now() - t0).toBeLessThan(20_000);
    expect(st).toMatchObject({ state: 'lost', infrastructure: true });
    expect(hasCode(st.error, 'CAIRN_REMOTE')).toBe(true);
    expect((st.error as Error).message).toMatch(/SSH host "bad": the persistent worker in .*\/bad\/workers\/[0-9a-f]{16} did not answer \(the channel closed, exit 4\)\. Check nodePath \(\/nonexistent\/node\) and that workDir is writable, or set worker: 'never'\.\nIts output:\n[\s\S]*the worker did not start[\s\S]*failed to execute \/nonexistent\/node/);
    await ex.stop();
  });

  it("falls back to a detached process per step: worker 'never', GPU steps, long steps and the per-step hint", async () => {
    const prefix = scratch();
    const { ex, rec } = await executor({ hosts: [hostOf(a, 'a', { capacity: { cpus: 4, gpus: [3] } })], pollIntervalMs: 50 }, prefix);
    const gpu = await ex.submit(jobFor(prefix, 'whereAmI', { resources: { gpus: 1 } }));
    const long = await ex.submit(jobFor(prefix, 'whereAmI', { resources: { timeLimit: 3600 } }));
    const optOut = await ex.submit(jobFor(prefix, 'whereAmI', { resources: { hints: { sshWorker: false } } }));
    const short = await ex.submit(jobFor(prefix, 'whereAmI', { resources: { timeLimit: 60 } }));
    for (const h of [gpu, long, optOut]) {
      const st = await rec.done(h.jobId);
      expect(st.state).toBe('succeeded');
      expect(info(h).runsIn).toBe('detached');
      // Its own process: the wrapper's group leader is the job's pid; node is a child in that group.
      expect((st.result as { pid: number }).pid).not.toBe(info(h).pid);
      expect(existsSync(join(info(h).jobDir as string, 'worker'))).toBe(false);
    }
    expect(((await rec.done(gpu.jobId)).result as { cuda: string }).cuda).toBe('3');
    expect(info(short).runsIn).toBe('worker');
    expect((await rec.done(short.jobId)).state).toBe('succeeded');
    await expect(ex.submit(jobFor(prefix, 'tiny', { name: 'bad-hint', resources: { hints: { sshWorker: 'yes' } } }))).rejects.toSatisfy(
      (e) => hasCode(e, 'CAIRN_INVALID_SPEC') && (e as { step?: string }).step === 'bad-hint' && /resources\.hints\.sshWorker must be true .* or false/.test((e as Error).message),
    );
    await ex.stop();

    // worker: 'never' on a fresh host: every step detached, and no worker is ever started there.
    const c = await startSshd();
    try {
      const rc = new Recorder(prefix);
      const never = createSshExecutor({ hosts: [hostOf(c, 'c')], pollIntervalMs: 50, worker: 'never' });
      await never.start(rc);
      const plain = await never.submit(jobFor(prefix, 'hello'));
      const forced = await never.submit(jobFor(prefix, 'whereAmI', { resources: { hints: { sshWorker: true } } }));
      for (const h of [plain, forced]) {
        expect((await rc.done(h.jobId)).state).toBe('succeeded');
        expect(info(h).runsIn).toBe('detached');
      }
      expect(existsSync(join(c.workDir, 'c', 'workers'))).toBe(false);
      await never.stop();
    } finally {
      await c.stop();
    }
    expect(() => createSshExecutor({ hosts: [hostOf(a, 'a')], worker: 'sometimes' as never })).toThrow(/`worker` must be one of 'auto', 'always', 'never' \(got "sometimes"\)/);
    expect(() => createSshExecutor({ hosts: [hostOf(a, 'a')], workerIdleMs: 0 })).toThrow(/workerIdleMs/);
  });
});
