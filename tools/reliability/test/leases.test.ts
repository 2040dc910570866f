/**
 * Leases and commits under attack (issue 15): a runner paused past its lease while another takes
 * the step over, lease files deleted, replaced, truncated or filled with garbage while a step
 * runs, an empty lease left by a writer that died, workers of SIGKILLed runners, and a fully
 * built store served from a read-only mount. Real files, real processes.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { hasCode, StepSpec } from '@cairn/core';
import { localLayout, StepRunner, type StepRunError } from '@cairn/runner';
import { FIXTURES, scratchDir } from './children.js';
import { assertBuilt } from './env.js';
import { record } from './metrics.js';
import { spawnReporting } from '../../testenv/reporting-child.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});
beforeAll(() => assertBuilt());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const lines: string[] = [];
const quiet = { info() {}, warn: (m: string) => lines.push(m), error() {} };

async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(20);
  }
}

/** A lease-runner child (fixtures/lease-runner.mjs). */
function leaseRunner(config: { work: string; stepMs: number; heartbeatMs: number; staleMs: number }) {
  const c = spawnReporting(process.execPath, [join(FIXTURES, 'lease-runner.mjs'), JSON.stringify(config)]);
  cleanups.push(() => c.proc.kill('SIGKILL'));
  return c;
}

const slowPath = (work: string) => new StepSpec({ name: 'slow', hashAttrs: { v: 1 } }).outputPath(join(work, 'store'));
const executions = (work: string) => (existsSync(join(work, 'counts', 'slow')) ? readFileSync(join(work, 'counts', 'slow'), 'utf8').trim().split('\n').length : 0);

describe('leases and fenced commits', () => {
  it('a runner paused past its lease commits nothing and removes no lease of the runner that took over', async () => {
    const t = scratchDir('cairn-rel-pause-');
    cleanups.push(t.cleanup);
    mkdirSync(join(t.dir, 'counts'));
    const timing = { work: t.dir, stepMs: 3000, heartbeatMs: 300, staleMs: 1500 };
    const a = leaseRunner(timing);
    await until(() => a.output().includes('STARTED'), 20_000, 'runner A to start the step');
    a.proc.kill('SIGSTOP'); // a frozen VM, a long GC, a hung NFS mount
    const lease = localLayout.leaseFile(slowPath(t.dir));
    const tokenA = JSON.parse(readFileSync(lease, 'utf8')).token as string;
    await sleep(timing.staleMs + 400);
    // B's step is longer: its lease must still be there when A, resumed, has given up (on a
    // loaded machine A's exit can take seconds; with equal steps B could finish first).
    const b = leaseRunner({ ...timing, stepMs: 8000 });
    await until(() => b.output().includes('STARTED'), 20_000, 'runner B to take over');
    expect(b.output()).toMatch(/taking over the stale lease/);
    const tokenB = JSON.parse(readFileSync(lease, 'utf8')).token as string;
    expect(tokenB).not.toBe(tokenA);
    a.proc.kill('SIGCONT'); // A wakes up while B still works on the step
    const ra = await a.done;
    expect(ra).toMatchObject({ ok: false, code: 'CAIRN_STEP_FAILED', cause: 'CAIRN_LEASE_LOST' });
    // A left B's lease alone, and published nothing.
    expect(JSON.parse(readFileSync(lease, 'utf8')).token).toBe(tokenB);
    expect(existsSync(join(slowPath(t.dir), 'data'))).toBe(false);
    const rb = await b.done;
    expect(rb).toMatchObject({ ok: true, counts: { succeeded: 1 } });
    expect(executions(t.dir)).toBe(2); // both ran the function; exactly one execution is committed
    expect(readFileSync(join(slowPath(t.dir), 'data'), 'utf8')).toBe('BEGIN\nEND\n');
    expect(JSON.parse(readFileSync(join(slowPath(t.dir), '.artifact.json'), 'utf8')).result).toBe(b.proc.pid);
    expect(existsSync(lease)).toBe(false);
    // A zombie's directory never reaches the output: A's staged directory is gone, B's is the output.
    expect(readdirSync(join(t.dir, 'store')).filter((n) => n.includes('.cairn-attempt-'))).toEqual([]);
    record('leases', { pausedRunner: 'ok: A got CAIRN_LEASE_LOST, committed nothing, left B’s lease; output is B’s alone' });
  }, 60_000);

  it.each([
    ['deleted', (file: string) => rmSync(file)],
    ['replaced by another holder', (file: string) => writeFileSync(file, JSON.stringify({ worker_id: 'thief', timestamp: Date.now() / 1000, host: 'elsewhere', pid: 1, processStartTime: null, runId: 'thief', token: 'thief.1' }))],
    ['truncated', (file: string) => writeFileSync(file, '')],
    ['filled with garbage', (file: string) => writeFileSync(file, Buffer.from([0xff, 0x00, 0x7b, 0x22]))],
  ])('a lease %s while the step runs: the step stops with CAIRN_LEASE_LOST and nothing reaches the output path', async (what, tamper) => {
    const t = scratchDir('cairn-rel-tamper-');
    cleanups.push(t.cleanup);
    const prefix = join(t.dir, 'store');
    let staged = '';
    const step = new StepSpec({
      name: 'victim',
      fn: async (out, ctx) => {
        staged = out;
        writeFileSync(join(out, 'part'), 'before');
        tamper(localLayout.leaseFile(step.outputPath(prefix)));
        // Ignores its signal for a while, then writes on (a zombie).
        await sleep(400);
        writeFileSync(join(out, 'part'), `after (aborted: ${String(ctx.signal.aborted)})`);
      },
    });
    const err = (await new StepRunner({ prefix, logger: quiet, leases: { heartbeatMs: 50 } }).run([step], { handleSigint: false }).catch((e: unknown) => e)) as StepRunError;
    expect(err.code).toBe('CAIRN_STEP_FAILED');
    expect(hasCode(err.failures[0]?.error, 'CAIRN_LEASE_LOST')).toBe(true);
    expect(existsSync(step.outputPath(prefix))).toBe(false);
    expect(existsSync(staged)).toBe(false);
    record('leases', { [`tampered: ${what}`]: 'ok: CAIRN_LEASE_LOST, nothing published' });
  });

  it('an empty lease (its writer died between create and write) is taken over within the grace, with a warning naming it', async () => {
    const t = scratchDir('cairn-rel-empty-');
    cleanups.push(t.cleanup);
    const prefix = join(t.dir, 'store');
    const step = new StepSpec({ name: 'after-crash', fn: () => 'built' });
    mkdirSync(prefix, { recursive: true });
    const lease = localLayout.leaseFile(step.outputPath(prefix));
    writeFileSync(lease, '');
    lines.length = 0;
    const start = Date.now();
    const summary = await new StepRunner({ prefix, logger: quiet, leases: { unreadableGraceMs: 1000, pollMs: 50 } }).run([step], { handleSigint: false });
    const took = Date.now() - start;
    expect(summary.counts).toEqual({ succeeded: 1 });
    expect(took).toBeGreaterThanOrEqual(900);
    expect(took).toBeLessThan(5000); // the grace, not staleMs (90 s)
    expect(lines.some((l) => l.includes('taking over an unreadable lease') && l.includes(lease))).toBe(true);
    // An empty lease older than the grace is taken over at once.
    rmSync(step.outputPath(prefix), { recursive: true });
    writeFileSync(lease, '');
    utimesSync(lease, new Date(Date.now() - 10_000), new Date(Date.now() - 10_000));
    const again = Date.now();
    await new StepRunner({ prefix, logger: quiet, leases: { unreadableGraceMs: 1000 } }).run([step], { handleSigint: false });
    expect(Date.now() - again).toBeLessThan(900);
    record('leases', { emptyLease: `ok: taken over after ${took} ms (grace 1 s), with a warning` });
  });
});

describe('read-only serving', () => {
  it('a fully built pipeline runs from a read-only bind mount with no write; a missing step is one error before anything runs', async () => {
    const t = scratchDir('cairn-rel-rosrv-');
    cleanups.push(t.cleanup);
    const store = join(t.dir, 'store');
    const mount = join(t.dir, 'ro');
    let calls = 0;
    const build = () => {
      const a = new StepSpec({ name: 'a', fn: (out) => (writeFileSync(join(out, 'x'), 'a'), ++calls) });
      const b = new StepSpec({ name: 'b', deps: [a], fn: () => ++calls });
      return [a, b, new StepSpec({ name: 'c', deps: [b], fn: () => ++calls })];
    };
    await new StepRunner({ prefix: store, logger: quiet }).run(build(), { handleSigint: false });
    expect(calls).toBe(3);
    mkdirSync(mount);
    try {
      execFileSync('mount', ['--bind', store, mount], { stdio: 'pipe' });
      cleanups.push(() => execFileSync('umount', ['-l', mount], { stdio: 'ignore' }));
      execFileSync('mount', ['-o', 'remount,ro,bind', mount], { stdio: 'pipe' });
    } catch (err) {
      console.warn(`SKIPPING: cannot make a read-only bind mount (needs root): ${String((err as Error).message).split('\n')[0]}`);
      record('leases', { readOnlyServing: 'skipped (cannot mount)' });
      return;
    }
    const snapshot = () =>
      readdirSync(store, { recursive: true, withFileTypes: true })
        .map((e) => {
          const p = join(e.parentPath, e.name);
          const s = statSync(p);
          return `${p} ${s.size} ${s.mtimeMs}`;
        })
        .sort()
        .join('\n');
    const before = snapshot();
    lines.length = 0;
    const summary = await new StepRunner({ prefix: mount, logger: quiet }).run(build(), { handleSigint: false });
    expect(summary.counts).toEqual({ cached: 3 });
    expect(calls).toBe(3);
    expect(lines).toEqual([]);
    expect(snapshot()).toBe(before);
    // One step missing: one clear error, naming it, before anything runs.
    const cPath = build()[2]?.outputPath(store) as string;
    rmSync(cPath, { recursive: true });
    const err = (await new StepRunner({ prefix: mount, logger: quiet }).run(build(), { handleSigint: false }).catch((e: unknown) => e)) as Error & { code?: string };
    expect(err.code).toBe('CAIRN_STORE');
    expect(err.message).toContain('Step "c"');
    expect(err.message).toMatch(/EROFS|read-only/);
    expect(calls).toBe(3);
    record('leases', { readOnlyServing: 'ok: 0 writes when built; one CAIRN_STORE naming the step when not' });
  });
});

describe('workers die with their runner', () => {
  it('20 SIGKILLs of a runner with process and threads workers: no worker alive 1 s after its runner died', async () => {
    const t = scratchDir('cairn-rel-orphans-');
    cleanups.push(t.cleanup);
    // Beside the fixtures, so it resolves @cairn/* from this package.
    const script = join(FIXTURES, `.orphans-${process.pid}.mjs`);
    cleanups.push(() => rmSync(script, { force: true }));
    writeFileSync(
      script,
      `import { StepSpec } from '@cairn/core';
import { StepRunner } from '@cairn/runner';
const ref = { module: ${JSON.stringify(`${FIXTURES}steps.mjs`)}, export: 'hang' };
const prefix = process.argv[2];
const specs = ['process', 'process', 'threads', 'threads'].map((executor, i) => new StepSpec({ name: 'h' + i, hashAttrs: { i }, executor, ref }));
await new StepRunner({ prefix, logger: { info() {}, warn() {}, error() {} } }).run(specs, { handleSigint: false });
`,
    );
    // The hang step appends "<name> <pid>" to <work>/counts/<name> when it starts, and never ends.
    const pidsOf = (work: string) => {
      const dir = join(work, 'counts');
      if (!existsSync(dir)) return [];
      // Complete lines only: a file just created by the append may still be empty when read.
      return readdirSync(dir).flatMap((f) => readFileSync(join(dir, f), 'utf8').split('\n').slice(0, -1).map((l) => Number(l.split(' ')[1])).filter(Number.isInteger));
    };
    const zombieOrGone = (pid: number) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
        return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
      } catch {
        return true;
      }
    };
    let worst = 0;
    for (let round = 0; round < 20; round++) {
      const work = join(t.dir, `w${round}`);
      mkdirSync(join(work, 'counts'), { recursive: true });
      const runner = spawn(process.execPath, [script, join(work, 'store')], { stdio: 'ignore' });
      cleanups.push(() => runner.kill('SIGKILL'));
      await until(() => pidsOf(work).length === 4, 20_000, 'four workers to start');
      const workers = [...new Set(pidsOf(work).filter((pid) => pid !== runner.pid))];
      expect(workers).toHaveLength(2); // the process workers; the threads are the runner's own
      runner.kill('SIGKILL');
      await new Promise((r) => runner.once('exit', r));
      const killed = Date.now();
      await until(() => workers.every(zombieOrGone), 1_000, 'the workers to die with their runner');
      worst = Math.max(worst, Date.now() - killed);
    }
    record('leases', { orphanedWorkers: `ok: 20 kills, every worker gone within ${worst} ms of its runner` });
  }, 120_000);
});
