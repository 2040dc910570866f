import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { hasCode } from '@cairn/core';
import type { JobHandle } from '@cairn/runner/executor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSshExecutor, type SshExecutorOptions, type SshJobInfo } from '../src/index.js';
import { alive, hostOf, jobFor, Recorder, scratch, removeScratch, sshdOrSkip, startSshd, until, type SshdInstance } from './helpers.js';

const run = sshdOrSkip();
const info = (h: JobHandle) => h.info as unknown as SshJobInfo;
const pidsOf = (h: JobHandle) => join(info(h).remoteOutputPath as string, 'pids.json');

describe.runIf(run)('SSH executor against real sshd (two hosts)', () => {
  let a: SshdInstance;
  let b: SshdInstance;
  const stray: number[] = [];
  beforeAll(async () => {
    [a, b] = await Promise.all([startSshd(), startSshd()]);
  });
  afterAll(async () => {
    // By group: a worker gone with its directory leaves its steps' subprocesses in its group.
    for (const pid of stray) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // no such group
      }
    }
    await Promise.all([a?.stop(), b?.stop()]);
    removeScratch();
  });

  async function executor(extra: Partial<SshExecutorOptions> = {}, prefix = scratch()) {
    const rec = new Recorder(prefix);
    const ex = createSshExecutor({ hosts: [hostOf(a, 'a'), hostOf(b, 'b')], pollIntervalMs: 50, cancelGraceMs: 1000, ...extra });
    await ex.start(rec);
    return { ex, rec, prefix };
  }

  it('runs a step: result, staged output, local log copy, logs()', async () => {
    const { ex, rec, prefix } = await executor();
    const job = jobFor(prefix, 'hello');
    const h = await ex.submit(job);
    expect(info(h).pid).toBeGreaterThan(0);
    const st = await rec.done(h.jobId);
    expect(st).toMatchObject({ state: 'succeeded', result: { answer: 42, list: [1, 2, 3] }, exitCode: 0 });
    expect(readFileSync(join(job.outputPath, 'hello.txt'), 'utf8')).toBe('hello from ssh\n');
    expect(readFileSync(job.logPaths.stdout, 'utf8')).toContain('hello step ran');
    const lines: string[] = [];
    for await (const l of ex.logs!(h, { follow: false })) lines.push(l);
    expect(lines).toContain('hello step ran');
    const polled = await ex.poll([h]);
    expect(polled.get(h.jobId)).toMatchObject({ state: 'succeeded', result: { answer: 42 } });
    await ex.stop();
  });

  it('reports a failure with the remote error, exit code and a log tail', async () => {
    const { ex, rec, prefix } = await executor();
    const [h1, h2] = await Promise.all([ex.submit(jobFor(prefix, 'boom')), ex.submit(jobFor(prefix, 'crash'))]);
    const s1 = await rec.done(h1!.jobId);
    expect(s1.state).toBe('failed');
    expect(s1.exitCode).toBe(1);
    const e1 = s1.error as Error & { code?: string; logTail?: string };
    expect(e1.message).toBe('the step blew up');
    expect(e1.code).toBe('E_BOOM');
    expect(e1.logTail).toContain('about to fail: line 2');
    const s2 = await rec.done(h2!.jobId);
    expect(s2).toMatchObject({ state: 'failed', exitCode: 7 });
    expect(hasCode(s2.error, 'CAIRN_REMOTE')).toBe(true);
    expect((s2.error as Error).message).toMatch(/exited with code 7[\s\S]*crashing hard/);
    await ex.stop();
  });

  it('respects GPU slots and capacity: CUDA_VISIBLE_DEVICES never overlaps on a host', async () => {
    const { ex, rec, prefix } = await executor({
      hosts: [hostOf(a, 'a', { capacity: { cpus: 8, gpus: [0, 1] } }), hostOf(b, 'b', { capacity: { cpus: 8, gpus: [4, 5, 6] } })],
    });
    const jobs = [...Array.from({ length: 8 }, () => jobFor(prefix, 'gpu', { resources: { gpus: 1 } })), jobFor(prefix, 'gpu', { resources: { gpus: 2 } }), jobFor(prefix, 'gpu', { resources: { gpus: { count: 3 } } })];
    const handles = await Promise.all(jobs.map((j) => ex.submit(j)));
    const done = await Promise.all(handles.map((h) => rec.done(h.jobId)));
    const recs = done.map((s, i) => ({ ...(s.result as { cuda: string; gpuIndices: number[]; start: number; end: number }), host: info(handles[i]!).host, want: jobs[i]!.resources.gpus }));
    for (const r of recs) {
      expect(r.cuda).toBe(r.gpuIndices.join(','));
      const want = typeof r.want === 'object' ? r.want.count : r.want;
      expect(r.gpuIndices.length).toBe(want);
      expect(r.gpuIndices.every((g) => (r.host === 'a' ? [0, 1] : [4, 5, 6]).includes(g))).toBe(true);
    }
    for (const x of recs)
      for (const y of recs) {
        if (x === y || x.host !== y.host || x.end <= y.start || y.end <= x.start) continue;
        expect(x.gpuIndices.filter((g) => y.gpuIndices.includes(g))).toEqual([]);
      }
    expect(recs.find((r) => r.gpuIndices.length === 3)?.host).toBe('b');
    await expect(ex.submit(jobFor(prefix, 'gpu', { resources: { gpus: 4 } }))).rejects.toSatisfy((e) => hasCode(e, 'CAIRN_EXECUTOR') && /no host/.test((e as Error).message));
    await ex.stop();
  });

  it('queues steps when no host has room, never oversubscribing cpus', async () => {
    const { ex, rec, prefix } = await executor({ hosts: [hostOf(a, 'a', { capacity: { cpus: 1, gpus: [0] } })] });
    const jobs = Array.from({ length: 3 }, () => jobFor(prefix, 'gpu', { resources: { cpu: 1 } }));
    const handles = await Promise.all(jobs.map((j) => ex.submit(j)));
    const done = await Promise.all(handles.map((h) => rec.done(h.jobId)));
    const spans = done.map((s) => s.result as { start: number; end: number }).sort((x, y) => x.start - y.start);
    for (let i = 1; i < spans.length; i++) expect(spans[i]!.start).toBeGreaterThanOrEqual(spans[i - 1]!.end);
    expect(rec.statuses.get(handles[2]!.jobId)?.[0]?.state).toBe('running');
    await ex.stop();
  });

  it('cancel kills the remote process group (TERM, then KILL after the grace)', async () => {
    // The detached per-step process (the persistent worker's cancel is in worker.test.ts).
    const { ex, rec, prefix } = await executor({ worker: 'never' });
    const h = await ex.submit(jobFor(prefix, 'sleeper'));
    await until('the sleeper to start', () => existsSync(pidsOf(h)));
    const pids = JSON.parse(readFileSync(pidsOf(h), 'utf8')) as { pid: number; child: number };
    expect(alive(pids.pid) && alive(pids.child)).toBe(true);
    await ex.cancel([h]);
    expect((await rec.done(h.jobId)).state).toBe('cancelled');
    expect(alive(pids.pid)).toBe(false);
    expect(alive(pids.child)).toBe(false);
    expect(alive(info(h).pid as number)).toBe(false);
    await ex.stop();
  });

  it('a dropped SSH connection does not stop the job; a new executor adopts it', async () => {
    const { ex, prefix } = await executor({ hosts: [hostOf(a, 'a')] });
    const job = jobFor(prefix, 'sleeper', { resources: { hints: { sleepMs: 2000 } } });
    const h = await ex.submit(job);
    stray.push(info(h).pid as number);
    await until('the sleeper to start', () => existsSync(pidsOf(h)));
    a.killSessions(); // drops every connection, as a network blip or a dead runner would
    await ex.stop();
    const persisted = JSON.parse(JSON.stringify(h)) as JobHandle;
    const { ex: ex2, rec: rec2 } = await executor({ hosts: [hostOf(a, 'a')] }, prefix);
    expect(alive(info(h).pid as number)).toBe(true);
    const adopted = await ex2.adopt!(persisted);
    expect(adopted?.jobId).toBe(h.jobId);
    const st = await rec2.done(h.jobId);
    expect(st).toMatchObject({ state: 'succeeded', result: 'slept' });
    expect(readFileSync(join(job.outputPath, 'done.txt'), 'utf8')).toBe('done');
    expect(await ex2.adopt!({ ...persisted, jobId: 'x', info: { ...persisted.info, jobDir: `${info(h).jobDir}-missing` } })).toBeNull();
    await ex2.stop();
  });

  it('follows logs until the job ends', async () => {
    const { ex, rec, prefix } = await executor();
    const h = await ex.submit(jobFor(prefix, 'sleeper', { resources: { hints: { sleepMs: 800 } } }));
    const lines: string[] = [];
    for await (const l of ex.logs!(h, { follow: true })) lines.push(l);
    expect(lines.join('\n')).toContain('sleeper started');
    expect((await rec.done(h.jobId)).state).toBe('succeeded');
    await ex.stop();
  });

  it('a stopped host makes its jobs lost as preempted (retried from preemptionRetries) and new steps go to the other host', async () => {
    const c = await startSshd();
    const prefix = scratch();
    const rec = new Recorder(prefix);
    const ex = createSshExecutor({ hosts: [hostOf(c, 'c'), hostOf(b, 'b')], pollIntervalMs: 50, hostTimeoutMs: 1000 });
    await ex.start(rec);
    const h = await ex.submit(jobFor(prefix, 'sleeper', { resources: { cpu: 4, hints: { sleepMs: 3000 } } }));
    expect(info(h).host).toBe('c');
    stray.push(info(h).pid as number);
    await until('the sleeper to start', () => existsSync(pidsOf(h)));
    await c.stop();
    const st = await rec.done(h.jobId);
    expect(st).toMatchObject({ state: 'lost', infrastructure: true, preempted: true });
    expect(st.reason).toMatch(/unreachable/);
    const h2 = await ex.submit(jobFor(prefix, 'hello'));
    expect(info(h2).host).toBe('b');
    expect((await rec.done(h2.jobId)).state).toBe('succeeded');
    await ex.stop();
  });

  it('refuses an unknown or changed host key with a clear error', async () => {
    const dir = scratch();
    const empty = join(dir, 'known_hosts_empty');
    writeFileSync(empty, '# nothing\n');
    const changed = join(dir, 'known_hosts_changed');
    writeFileSync(changed, `[127.0.0.1]:${a.port} ${b.hostPublicKey}\n`);
    for (const [file, pattern] of [
      [empty, /host key is not in .*add the line\n {2}\[127\.0\.0\.1\]:\d+ ssh-ed25519 /s],
      [changed, /host key differs .* someone may be intercepting/s],
    ] as const) {
      const ex = createSshExecutor({ hosts: [hostOf(a, 'a', { knownHostsPath: file })] });
      const err = await ex.start(new Recorder(dir)).catch((e: unknown) => e);
      expect(hasCode(err, 'CAIRN_REMOTE')).toBe(true);
      expect((err as Error).message).toMatch(pattern);
      await ex.stop();
    }
    // Explicitly disabled: connects, and says so loudly.
    const rec = new Recorder(dir);
    const ex = createSshExecutor({ hosts: [hostOf(a, 'a', { knownHostsPath: empty })], hostKeyVerification: false });
    await ex.start(rec);
    expect(rec.warnings.join('\n')).toMatch(/HOST KEY VERIFICATION IS DISABLED/);
    await ex.stop();
  });

  it('stages dependencies to the host and outputs back, verified (hostile file names, 3 MiB file)', async () => {
    const { ex, rec, prefix } = await executor();
    const producer = jobFor(prefix, 'hostileFiles');
    const hp = await ex.submit(producer);
    const sp = await rec.done(hp.jobId);
    expect(sp.state).toBe('succeeded');
    const names = sp.result as string[];
    for (const n of names) expect(readFileSync(join(producer.outputPath, n), 'utf8')).toBe(`content of ${n}`);
    expect(readFileSync(join(producer.outputPath, 'dir "$(id)"', 'big.bin')).equals(Buffer.alloc(3 * 1024 * 1024, 7))).toBe(true);
    const consumer = jobFor(prefix, 'gather', { deps: [producer.spec], depPaths: { [producer.spec.nameWithHash]: producer.outputPath } });
    const hc = await ex.submit(consumer);
    const sc = await rec.done(hc.jobId);
    expect(sc).toMatchObject({ state: 'succeeded', result: names.length + 1 });
    const gathered = JSON.parse(readFileSync(join(consumer.outputPath, 'gathered.json'), 'utf8')) as Record<string, string>;
    for (const n of names) expect(gathered[`${producer.spec.nameWithHash}/${n}`]).toBe(`content of ${n}`);
    await ex.stop();
  });

  it('hostile names and values are inert (paths, step names, module path, work dir)', async () => {
    const canary = scratch('cairn-canary-');
    const evil = (tag: string) => `'$(touch ${canary}/${tag}1)' \`touch ${canary}/${tag}2\` "$(touch ${canary}/${tag}3)";touch ${canary}/${tag}4\n$(touch ${canary}/${tag}5)`;
    const workDir = join(a.workDir, `wd ${evil('w')}`);
    const modDir = join(scratch(), `mod ${evil('m').replaceAll('/', '_')}`);
    mkdirSync(modDir, { recursive: true });
    copyFileSync(new URL('./fixtures/steps.mjs', import.meta.url), join(modDir, 'steps.mjs'));
    chmodSync(modDir, 0o755);
    const prefix = join(scratch(), `store ${evil('p').replaceAll('\n', ' ')}`);
    mkdirSync(prefix, { recursive: true, mode: 0o777 });
    const rec = new Recorder(prefix);
    const ex = createSshExecutor({ hosts: [hostOf(a, 'a', { workDir })], pollIntervalMs: 50, sharedFs: false });
    await ex.start(rec);
    const name = `it's $(touch PWNED) \`touch PWNED2\` "x" ; & | > <`;
    const producer = jobFor(prefix, 'hostileFiles', { name, module: pathToFileURL(join(modDir, 'steps.mjs')).href });
    const hp = await ex.submit(producer);
    expect((await rec.done(hp.jobId)).state).toBe('succeeded');
    const consumer = jobFor(prefix, 'gather', { name: `${name} 2`, deps: [producer.spec], depPaths: { [producer.spec.nameWithHash]: producer.outputPath } });
    const hc = await ex.submit(consumer);
    expect((await rec.done(hc.jobId)).state).toBe('succeeded');
    await ex.cancel([hc]);
    expect(info(hp).jobDir?.startsWith(workDir)).toBe(true);
    expect(existsSync(join(workDir, 'code'))).toBe(true);
    expect(readdirSync(canary)).toEqual([]);
    await ex.stop();
  });
});
