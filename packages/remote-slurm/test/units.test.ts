/** Pure parts: flags, names, time limits, the wrapper's exit file and the state decision. */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { restTransport } from '../src/rest.js';
import { describe, expect, test } from 'vitest';
import { formatMemory, formatTimeLimit, jobName, restJob, sbatchArgs, submitSpec } from '../src/sbatch.js';
import { parseExitFile, shQuote, wrapperScript, jobFiles } from '../src/script.js';
import { decide, normalizeState, type Observation } from '../src/states.js';

const files = { name: 'cairn-x', scriptPath: '/d/job.sh', script: '#!/bin/bash', workdir: '/w', slurmOutput: '/d/slurm-%j.out' };

describe('sbatch flags', () => {
  test('resources and options become flags; --no-requeue by default', () => {
    const spec = submitSpec({ cpu: 4, memoryGb: 4, gpus: { count: 2, type: 'a100' }, timeLimit: 3700, hints: { partition: 'gpu' } }, { partition: 'cpu', account: 'lab', qos: 'high', constraint: 'avx2' }, files);
    expect(sbatchArgs(spec, { extraArgs: ['--exclusive'] })).toEqual([
      '--parsable', '--job-name=cairn-x', '--chdir=/w', '--output=/d/slurm-%j.out', '--error=/d/slurm-%j.out', '--export=ALL', '--no-requeue',
      '--cpus-per-task=4', '--mem=4G', '--gpus=a100:2', '--time=0-01:02:00', '--signal=B:USR2@60',
      '--partition=gpu', '--account=lab', '--qos=high', '--constraint=avx2', '--exclusive',
    ]);
    expect(sbatchArgs(submitSpec({ gpus: 1 }, { requeue: true }, files), { gpuFlag: 'gres' })).toContain('--gres=gpu:1');
    expect(restJob(spec, { PATH: '/bin' })).toMatchObject({ cpus_per_task: 4, memory_per_node: 4096, gpus: 'a100:2', time_limit: 62, partition: 'gpu', requeue: false });
  });

  test('time limits, memory and names', () => {
    expect(formatTimeLimit(1)).toBe('0-00:01:00');
    expect(formatTimeLimit(90_000)).toBe('1-01:00:00');
    expect(formatMemory(1536)).toBe('1536M');
    expect(jobName('cairn', 'my step/ü-0123456789abcdef')).toBe('cairn-my_step_-0123456789abcdef');
    const long = jobName('cairn', `${'x'.repeat(300)}-0123456789abcdef`);
    expect(long).toHaveLength(128);
    expect(long.endsWith('-0123456789abcdef')).toBe(true);
  });
});

describe('wrapper script', () => {
  test('quotes every path and records the exit code atomically', () => {
    const text = wrapperScript({ title: 't', files: jobFiles("/tmp/it's"), logs: { stdout: '/l/o', stderr: '/l/e' }, nodePath: '/n', workerEntry: '/w.js', watchdogSeconds: 0 });
    expect(text).toContain(shQuote("/tmp/it's/task.msgpack"));
    expect(text).toMatch(/exitcode\.\$\$" && mv -f/);
    expect(text).not.toContain('sleep');
  });

  test('exit file parsing', () => {
    expect(parseExitFile('0 -\n')).toEqual({ code: 0, signal: null });
    expect(parseExitFile('143 USR2\n')).toEqual({ code: 143, signal: 'USR2' });
    expect(parseExitFile('garbage')).toBeUndefined();
  });
});

describe('state decision', () => {
  const o = (p: Partial<Observation>): Observation => ({ begun: false, cancelRequested: false, graceExpired: false, ...p });

  test('the exit file is the truth; COMPLETING and UNKNOWN never succeed on their own', () => {
    expect(decide(o({ slurmState: 'COMPLETING', exit: { code: 0, signal: null } }))).toEqual({ kind: 'result', code: 0 });
    expect(decide(o({ slurmState: 'COMPLETING' }))).toEqual({ kind: 'active', state: 'running' });
    expect(decide(o({ slurmState: 'UNKNOWN', graceExpired: true }))).toEqual({ kind: 'wait' });
    expect(decide(o({ slurmState: 'COMPLETED' }))).toEqual({ kind: 'wait' });
    expect(decide(o({ slurmState: 'COMPLETED', graceExpired: true }))).toMatchObject({ kind: 'ended', state: 'lost', infrastructure: true });
    expect(decide(o({ slurmState: 'PENDING', begun: true }))).toEqual({ kind: 'active', state: 'running' });
  });

  test('node failures are infrastructure, preemption is its own; Slurm kills fail with their reason', () => {
    for (const s of ['NODE_FAIL', 'BOOT_FAIL']) expect(decide(o({ slurmState: s }))).toMatchObject({ kind: 'ended', state: 'lost', reason: s, infrastructure: true });
    expect(decide(o({ slurmState: 'PREEMPTED' }))).toEqual({ kind: 'ended', state: 'preempted', reason: 'PREEMPTED' });
    for (const s of ['TIMEOUT', 'OUT_OF_MEMORY', 'CANCELLED']) expect(decide(o({ slurmState: s }))).toMatchObject({ kind: 'ended', state: 'failed', reason: s });
    expect(decide(o({ slurmState: 'CANCELLED', cancelRequested: true }))).toMatchObject({ state: 'cancelled' });
    expect(decide(o({ slurmState: 'TIMEOUT', exit: { code: 143, signal: 'TERM' } }))).toMatchObject({ state: 'failed', reason: 'TIMEOUT', exitCode: 143 });
    expect(decide(o({ slurmState: 'RUNNING', exit: { code: 143, signal: 'USR2' } }))).toMatchObject({ state: 'failed', reason: 'TIMEOUT' });
    expect(decide(o({ slurmState: 'COMPLETING', exit: { code: 143, signal: 'TERM' } }))).toEqual({ kind: 'wait' });
    expect(normalizeState('CANCELLED by 0')).toBe('CANCELLED');
    // The worker died of Slurm's TERM before the wrapper's trap ran: Slurm's state says why.
    expect(decide(o({ slurmState: 'CANCELLED', exit: { code: 143, signal: null } }))).toMatchObject({ state: 'failed', reason: 'CANCELLED', exitCode: 143 });
    expect(decide(o({ slurmState: 'RUNNING', exit: { code: 143, signal: null } }))).toEqual({ kind: 'wait' });
    expect(decide(o({ slurmState: 'FAILED', exit: { code: 1, signal: null } }))).toEqual({ kind: 'result', code: 1 });
  });
});

describe('REST transport: requests in flight', () => {
  test('never more than maxInFlight at once; the rest wait their turn; a bad value is CAIRN_CONFIG', async () => {
    let now = 0;
    let peak = 0;
    const server = createServer((req, res) => {
      now++;
      peak = Math.max(peak, now);
      req.resume();
      setTimeout(() => {
        now--;
        const body = JSON.stringify({ jobs: [], errors: [] });
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
        res.end(body);
      }, 15);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const stats = { sbatchCalls: 0, squeueCalls: 0, sacctCalls: 0, scancelCalls: 0, restCalls: 0 };
      const t = restTransport({ url: `http://127.0.0.1:${port}`, user: 'u', token: 't', maxInFlight: 3 }, stats);
      await Promise.all(Array.from({ length: 20 }, (_, i) => t.query([String(i)])));
      expect(stats.restCalls).toBe(20);
      expect(peak).toBe(3);
      expect(() => restTransport({ url: 'http://127.0.0.1:1', user: 'u', token: 't', maxInFlight: 0 }, stats)).toThrow(expect.objectContaining({ code: 'CAIRN_CONFIG' }));
    } finally {
      server.close();
    }
  });
});

describe('REST transport: a submission that gets no answer', () => {
  /**
   * A slurmrestd stand-in: the first POST is read and its connection reset (after creating the
   * job when `created`); GET /jobs lists the jobs made so far; later POSTs are answered.
   */
  async function flakyServer(created: boolean) {
    const jobs: { job_id: number; name: string; standard_output: string; job_state: string }[] = [];
    let posts = 0;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const reply = (body: unknown) => {
          const text = JSON.stringify(body);
          res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
          res.end(text);
        };
        if (req.method === 'GET') return reply({ jobs, errors: [] });
        posts++;
        const { job } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { job: { name: string; standard_output: string } };
        const id = 40 + posts;
        if (posts === 1) {
          if (created) jobs.push({ job_id: id, name: job.name, standard_output: job.standard_output.replace('%j', String(id)), job_state: 'PENDING' });
          req.socket.destroy();
          return;
        }
        jobs.push({ job_id: id, name: job.name, standard_output: job.standard_output, job_state: 'PENDING' });
        reply({ job_id: id, errors: [] });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const stats = { sbatchCalls: 0, squeueCalls: 0, sacctCalls: 0, scancelCalls: 0, restCalls: 0 };
    const transport = restTransport({ url: `http://127.0.0.1:${port}`, user: 'u', token: 't' }, stats);
    return { transport, stats, posts: () => posts, jobs, close: () => server.close() };
  }

  test('finds the job it created instead of submitting it again', async () => {
    const s = await flakyServer(true);
    try {
      const id = await s.transport.submit(submitSpec({}, {}, files));
      expect(id).toBe('41');
      expect(s.posts()).toBe(1);
      expect(s.jobs).toHaveLength(1);
    } finally {
      s.close();
    }
  });

  test('submits again when no job was created', async () => {
    const s = await flakyServer(false);
    try {
      const id = await s.transport.submit(submitSpec({}, {}, files));
      expect(id).toBe('42');
      expect(s.posts()).toBe(2);
      expect(s.jobs.map((j) => j.job_id)).toEqual([42]);
    } finally {
      s.close();
    }
  });
});

describe('option keys (issue 18: a misspelt option was dropped in silence)', () => {
  test('unknown keys at the top, in pack, poll and rest name the nearest known one; known ones pass', async () => {
    const { createSlurmExecutor } = await import('../src/executor.js');
    const err = (o: unknown) => {
      try {
        createSlurmExecutor(o as never);
      } catch (e) {
        return e as { code: string; message: string };
      }
      throw new Error('expected an error');
    };
    expect(err({ partiton: 'gpu' })).toMatchObject({ code: 'CAIRN_UNKNOWN_OPTION', message: expect.stringMatching(/createSlurmExecutor\(\): unknown option "partiton"; did you mean "partition"\?/) });
    expect(err({ pack: { stepPerTask: 4 } }).message).toMatch(/pack: unknown option "stepPerTask"; did you mean "stepsPerTask"\?/);
    expect(err({ poll: { maxMS: 1 } }).message).toMatch(/poll: unknown option "maxMS"/);
    expect(err({ transport: 'rest', rest: { url: 'http://x', user: 'u', token: 't', timeout: 1 } }).message).toMatch(/rest: unknown option "timeout"; did you mean "timeoutMs"\?/);
    expect(createSlurmExecutor({ partition: 'gpu', pack: { stepsPerTask: 4 }, poll: { maxMs: 1000 }, walltimeGraceSeconds: 30 }).name).toBe('slurm');
  });
});
