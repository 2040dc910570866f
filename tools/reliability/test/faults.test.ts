/**
 * Faults: a full disk, a read-only store, a hung step, corrupt status and record files, an SSH
 * host that dies mid-step. Each must end in a clear, typed error (or a correct rebuild), and a
 * rerun after the fault is removed must complete.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { apply, OUT, StepSpec, type StepContext } from '@cairn/core';
import { MemoryStore, StepRunner, type StepRunError } from '@cairn/runner';
import { createSshExecutor } from '@cairn/remote-ssh';
import { fill, hang, work } from '../fixtures/steps.mjs';
import { assertBuilt } from './env.js';
import { counts, FIXTURES, scratchDir } from './children.js';
import { record } from './metrics.js';
import { hostOptions, sshUsable, startSshd } from './ssh.js';

const STEPS = pathToFileURL(join(FIXTURES, 'steps.mjs')).href;
const quiet = { info() {}, warn() {}, error() {} };
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});

/** Mounts a tmpfs; returns false (and says why) where mounting is not allowed. */
function mountTmpfs(dir: string, options: string): boolean {
  mkdirSync(dir, { recursive: true });
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (err) {
    console.warn(`SKIPPING: cannot mount a tmpfs at ${dir} (needs root and CAP_SYS_ADMIN): ${String((err as Error).message).split('\n')[0]}`);
    return false;
  }
  cleanups.push(() => execFileSync('umount', ['-l', dir], { stdio: 'ignore' }));
  return true;
}

/** The run's rejection (fails the test when it resolves). */
async function rejection(p: Promise<unknown>, ms = 60_000): Promise<StepRunError & { code: string }> {
  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`run() did not settle within ${ms} ms`)), ms).unref());
  const settled = await Promise.race([p.then(() => ({ ok: true as const }), (err: unknown) => ({ ok: false as const, err })), timeout]);
  if (settled.ok) throw new Error('expected run() to reject, but it resolved');
  return settled.err as StepRunError & { code: string };
}

const chain = (names: string[], make: (name: string, deps: StepSpec[]) => StepSpec): StepSpec[] => {
  const out: StepSpec[] = [];
  for (const name of names) out.push(make(name, out.length ? [out[out.length - 1] as StepSpec] : []));
  return out;
};

const faults: Record<string, string> = {};
afterAll(() => record('faults', faults));

describe('faults', () => {
  beforeAll(() => assertBuilt());

  it('a store whose disk fills up mid-run fails the step clearly; a rerun after space is freed completes', async () => {
    const t = scratchDir('cairn-rel-full-');
    cleanups.push(t.cleanup);
    const prefix = join(t.dir, 'store');
    mkdirSync(join(t.dir, 'counts'));
    if (!mountTmpfs(prefix, 'size=2m')) return void (faults.diskFull = 'skipped (cannot mount)');
    const steps = chain(['f0', 'f1', 'f2', 'f3', 'f4'], (name, deps) => new StepSpec({ name, deps, fn: fill, resources: { hints: { bytes: 600 * 1024 } } }));
    const err = await rejection(new StepRunner({ prefix, logger: quiet }).run(steps, { handleSigint: false }));
    expect(err.code).toBe('CAIRN_STEP_FAILED');
    const first = err.failures[0];
    expect(first?.step).toBe('f3');
    expect(String((first?.error as Error).message)).toMatch(/ENOSPC|no space/i);
    execFileSync('mount', ['-o', 'remount,size=16m', prefix]);
    const summary = await new StepRunner({ prefix, logger: quiet }).run(steps, { handleSigint: false });
    expect(summary.counts).toEqual({ cached: 3, succeeded: 2 });
    expect(Object.fromEntries(counts(t.dir))).toEqual({ f0: 1, f1: 1, f2: 1, f3: 2, f4: 1 });
    faults.diskFull = 'ok: ENOSPC failed the step, rerun completed';
  });

  it('a read-only store is a clear CAIRN_STORE error before any step runs', async () => {
    const t = scratchDir('cairn-rel-ro-');
    cleanups.push(t.cleanup);
    const prefix = join(t.dir, 'store');
    mkdirSync(join(t.dir, 'counts'));
    if (!mountTmpfs(prefix, 'ro,size=1m')) return void (faults.readOnly = 'skipped (cannot mount)');
    const steps = chain(['r0', 'r1', 'r2'], (name, deps) => new StepSpec({ name, deps, fn: work }));
    const err = await rejection(new StepRunner({ prefix, logger: quiet }).run(steps, { handleSigint: false }));
    const inner = err.failures?.[0]?.error as { code?: string } | undefined;
    faults.readOnly = `FINDING: got ${err.code} (first failure ${String(inner?.code)}), not an up-front CAIRN_STORE`;
    expect(counts(t.dir).size).toBe(0);
    // The requirement: one up-front store error naming the prefix, not a failure per step.
    expect(err.code).toBe('CAIRN_STORE');
    expect(err.message).toContain(prefix);
    faults.readOnly = 'ok: CAIRN_STORE before anything ran';
  });

  it.each(['inline', 'process'])('a %s step that never ends hits its timeout (CAIRN_TIMEOUT) and the run settles', async (executor) => {
    const t = scratchDir('cairn-rel-hang-');
    cleanups.push(t.cleanup);
    mkdirSync(join(t.dir, 'counts'));
    const step = new StepSpec({
      name: `hang-${executor}`,
      executor,
      timeoutMs: 800,
      ...(executor === 'inline' ? { fn: hang } : { ref: { module: STEPS, export: 'hang' } }),
    });
    const err = await rejection(new StepRunner({ prefix: join(t.dir, 'store'), logger: quiet }).run([step], { handleSigint: false }), 30_000);
    expect(err.code).toBe('CAIRN_STEP_FAILED');
    expect((err.failures[0]?.error as { code?: string }).code).toBe('CAIRN_TIMEOUT');
    if (executor === 'process') {
      // The worker that hung is gone (its process group was killed).
      const pid = Number(readFileSync(join(t.dir, 'counts', step.name), 'utf8').trim().split(' ')[1]);
      await new Promise((r) => setTimeout(r, 3000));
      expect(existsSync(`/proc/${pid}`)).toBe(false);
    }
    faults[`timeout-${executor}`] = 'ok: CAIRN_TIMEOUT';
  });

  it('a status file truncated to zero bytes, or holding garbage, is treated as not built and rebuilt', async () => {
    const t = scratchDir('cairn-rel-status-');
    cleanups.push(t.cleanup);
    mkdirSync(join(t.dir, 'counts'));
    const prefix = join(t.dir, 'store');
    const steps = chain(['c0', 'c1', 'c2', 'c3'], (name, deps) => new StepSpec({ name, deps, fn: work }));
    const warnings: string[] = [];
    const runner = () => new StepRunner({ prefix, logger: { ...quiet, warn: (m) => void warnings.push(m) } });
    await runner().run(steps, { handleSigint: false });
    truncateSync(join((steps[1] as StepSpec).outputPath(prefix), '.executor_status'), 0);
    writeFileSync(join((steps[2] as StepSpec).outputPath(prefix), '.executor_status'), Buffer.from([0xff, 0x00, 0x53, 0x55, 0x43]));
    const summary = await runner().run(steps, { handleSigint: false });
    expect(summary.counts).toEqual({ cached: 2, succeeded: 2 });
    expect(Object.fromEntries(counts(t.dir))).toEqual({ c0: 1, c1: 2, c2: 2, c3: 1 });
    expect(warnings.join('\n')).toMatch(/empty|corrupt|unknown status/);
    faults.corruptStatus = 'ok: rebuilt with a warning';
  });

  it('a lazy step whose record holds garbage is treated as not built and rebuilt', async () => {
    const t = scratchDir('cairn-rel-record-');
    cleanups.push(t.cleanup);
    const prefix = join(t.dir, 'store');
    let executions = 0;
    const make = () =>
      apply({
        name: 'lazy',
        version: 'v1',
        fn: ({ out }: { out: string }) => {
          executions++;
          writeFileSync(join(out, 'data'), 'ok');
          return { ok: true };
        },
        inputs: { out: OUT },
      });
    const first = await new StepRunner({ prefix, logger: quiet }).load([make()]);
    expect(first[0]?.value).toEqual({ ok: true });
    writeFileSync(join(first[0]?.path as string, '.artifact.json'), '{"cairn": 1, "name": "la\u0000\xff garbage');
    const again = await new StepRunner({ prefix, logger: quiet }).load([make()]);
    expect(executions).toBe(2);
    expect(again[0]?.value).toEqual({ ok: true });
    faults.corruptRecord = 'ok: rebuilt';
  });

  it.runIf(sshUsable())('an SSH host that dies mid-step is reported as a failed/lost step with a clear error', async () => {
    const sshd = await startSshd();
    cleanups.push(() => void sshd.stop());
    const t = scratchDir('cairn-rel-sshdie-');
    cleanups.push(t.cleanup);
    const prefix = join(t.dir, 'store');
    const oldUmask = process.umask(0); // the SSH user writes into the shared store
    cleanups.push(() => process.umask(oldUmask));
    const step = new StepSpec({ name: 'remote-sleeper', executor: 'ssh', ref: { module: STEPS, export: 'sleeper' }, resources: { cpu: 1, hints: { sleepMs: 120_000 } } });
    const ssh = createSshExecutor({ hosts: [hostOptions(sshd, 'h1') as never], sharedFs: true, pollIntervalMs: 50, hostTimeoutMs: 2000 });
    const abort = new AbortController();
    cleanups.push(() => abort.abort());
    const running = new StepRunner({ prefix, executors: [ssh], logger: quiet }).run([step], { handleSigint: false, signal: abort.signal });
    // The step writes into its attempt's staged directory beside its output path.
    const pidFile = () => {
      const staged = existsSync(prefix) ? readdirSync(prefix).find((d) => d.includes('.cairn-attempt-')) : undefined;
      return staged === undefined ? '' : join(prefix, staged, 'pid');
    };
    const deadline = Date.now() + 30_000;
    while (!existsSync(pidFile()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(existsSync(pidFile())).toBe(true);
    const remotePid = Number(readFileSync(pidFile(), 'utf8'));
    cleanups.push(() => {
      try {
        process.kill(remotePid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    });
    // The host dies: its sessions and its listener go; its files (our client key) stay.
    sshd.killSessions();
    process.kill(sshd.pid, 'SIGKILL');
    const started = Date.now();
    faults.sshHostDeath = 'FINDING: run() did not settle within 45 s of the host dying';
    // hostTimeoutMs (2 s) × (1 attempt + 3 infrastructure retries) plus reconnect backoff fits well inside 45 s.
    const err = await rejection(running, 45_000);
    const cause = err.failures?.[0]?.error as { code?: string; message?: string } | undefined;
    faults.sshHostDeath = `got ${err.code} / ${String(cause?.code)} after ${Date.now() - started} ms: ${String(cause?.message).split('\n')[0]}`;
    expect(err.code).toBe('CAIRN_STEP_FAILED');
    expect(cause?.code).toBe('CAIRN_REMOTE');
    expect(cause?.message).toMatch(/h1/);
  });

  it('the in-memory store is the control: a clean run of the same chain succeeds', async () => {
    const store = new MemoryStore();
    const steps = chain(['m0', 'm1'], (name, deps) => new StepSpec({ name, deps, fn: (_out: string, _ctx: StepContext) => undefined }));
    const summary = await new StepRunner({ store, prefix: '/mem', logger: quiet }).run(steps, { handleSigint: false });
    expect(summary.counts).toEqual({ succeeded: 2 });
  });
});
