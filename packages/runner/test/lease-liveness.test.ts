/**
 * Lease liveness across PID namespaces and skewed clocks (issue 27). Real runner processes (the
 * BUILT packages, test/fixtures/lease-runner.mjs) share one store: a runner in another PID
 * namespace with the same host name (`unshare -p -f --mount-proc`, as containers with host
 * networking), or whose clock runs an hour ahead (`--import tools/testenv/clock-offset.mjs`), must
 * wait on a live lease rather than take it over; a dead holder's lease stamped in the future is
 * taken over once the file is older than `staleMs`, with a warning naming it.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { StepRunner } from '../src/index.js';
import { leaseFile } from '../src/store/local/layout.js';
import { Graph, memoryLogger, tempDirs } from './helpers/graph.js';
import { type ReportingChild, spawnReporting } from '../../../tools/testenv/reporting-child.js';

const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));
const RUNNER = join(FIXTURES, 'lease-runner.mjs');
const CLOCK = pathToFileURL(join(FIXTURES, '..', '..', '..', '..', 'tools', 'testenv', 'clock-offset.mjs')).href; // shared with store-s3's clock test
const dir = tempDirs();
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function canUnshare(): boolean {
  try {
    execFileSync('unshare', ['-p', '-f', '--mount-proc', '--kill-child', 'true'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Timing shared by both runners: a lease refreshed every 200 ms, stale after 3 s of silence. */
const TIMING = { heartbeatMs: 200, staleMs: 3000 };

/** Starts a lease-runner: `wrap` goes before node (unshare), `nodeArgs` after it, `offsetMs` shifts its clock. */
function runner(work: string, stepMs: number, opts: { wrap?: string[]; offsetMs?: number } = {}): ReportingChild<{ ok: boolean; counts?: Record<string, number> }> {
  const node = [process.execPath, ...(opts.offsetMs === undefined ? [] : ['--import', CLOCK]), RUNNER, JSON.stringify({ work, stepMs, ...TIMING })];
  const [cmd, ...args] = [...(opts.wrap ?? []), ...node] as [string, ...string[]];
  const c = spawnReporting<{ ok: boolean; counts?: Record<string, number> }>(cmd, args, { ...process.env, CAIRN_TEST_CLOCK_OFFSET_MS: String(opts.offsetMs ?? 0) });
  cleanups.push(() => c.proc.kill('SIGKILL'));
  return c;
}

async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(25);
  }
}

const executions = (work: string) => (existsSync(join(work, 'count')) ? readFileSync(join(work, 'count'), 'utf8').trim().split('\n').length : 0);

/**
 * Runner A takes the step's lease and works for 6 s; runner B starts while A works. B must wait
 * for A (never take A's live lease over) and then count the step built elsewhere.
 */
async function secondRunnerWaits(a: { wrap?: string[]; offsetMs?: number }, b: { wrap?: string[]; offsetMs?: number }): Promise<string> {
  const work = dir();
  const first = runner(work, 6000, a);
  await until(() => first.output().includes('STARTED'), 30_000, 'runner A to start the step');
  const second = runner(work, 6000, b);
  const [ra, rb] = await Promise.all([first.done, second.done]);
  expect(second.output()).not.toMatch(/taking over/);
  expect(executions(work)).toBe(1);
  expect(ra).toMatchObject({ ok: true, counts: { succeeded: 1 } });
  expect(rb).toMatchObject({ ok: true, counts: { skipped: 1 } });
  return second.output();
}

const unshare = ['unshare', '-p', '-f', '--mount-proc', '--kill-child'];

describe('lease liveness', () => {
  it.skipIf(!canUnshare())('a runner in another PID namespace with the same host name does not take over a live lease (both ways)', async () => {
    await secondRunnerWaits({}, { wrap: unshare });
    await secondRunnerWaits({ wrap: unshare }, {});
  }, 120_000);

  it('a runner whose clock runs an hour ahead does not take over a live lease; one an hour behind is warned about, not taken over', async () => {
    await secondRunnerWaits({}, { offsetMs: 3_600_000 });
    const out = await secondRunnerWaits({ offsetMs: 3_600_000 }, {});
    expect(out).toMatch(/in the future of the store's clock/);
  }, 120_000);

  it("takes over a dead holder's lease stamped in the future once the file is older than staleMs, with a warning naming it", async () => {
    const prefix = dir();
    const g = new Graph().step('a');
    const path = g.get('a').outputPath(prefix);
    mkdirSync(join(path, '..'), { recursive: true });
    const ahead = Date.now() / 1000 + 3600;
    writeFileSync(leaseFile(path), JSON.stringify({ worker_id: 'elsewhere-1-dead', timestamp: ahead, host: 'elsewhere', pid: 1, processStartTime: null, runId: 'dead', token: 'dead.1' }));
    const logger = memoryLogger();
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), 20_000);
    cleanups.push(() => clearTimeout(timer));
    const t0 = Date.now();
    await new StepRunner({ prefix, logger, leases: { heartbeatMs: 200, staleMs: 1000, pollMs: 50 } }).run(g.pick('a'), { signal: controller.signal, handleSigint: false });
    expect(g.calls).toEqual(['a']);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(900);
    const warning = logger.lines.find((l) => l.includes('in the future'));
    expect(warning).toContain(leaseFile(path));
    expect(logger.lines.some((l) => l.includes('taking over the stale lease of elsewhere-1-dead'))).toBe(true);
  }, 60_000);
});
