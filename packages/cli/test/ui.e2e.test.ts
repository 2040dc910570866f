/**
 * `cairn ui` in headless Chromium (playwright-core driving Debian's /usr/bin/chromium) against
 * the built CLI and real stores: a run started while the page is open turns green live; a
 * failed step's page shows its exit code and log tail; its usage row matches usage.json; a
 * 30,000-step run renders and a search finds a step; a step named like markup renders as text;
 * a non-loopback bind refuses requests without the token; a port in use is a clear error.
 * Screenshots go to .test-results/ui/.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { journalDir, journalFile, type JournalEntry } from '@cairn/runner';
import { assertBuilt, cairn, cairnAsync, makeProject, REPO_DIR, waitFor } from './helpers/cli.js';
import { chromiumPath, launchChromium, openPage } from './helpers/browser.js';

const SHOTS = join(REPO_DIR, '.test-results', 'ui');
const skip = chromiumPath() === undefined && !process.env.CI;
if (skip) console.warn('SKIPPED: the cairn ui tests need Chromium (apt-get install -y --no-install-recommends chromium).');

let project: ReturnType<typeof makeProject>;
let browser: Browser;
const servers: ReturnType<typeof cairnAsync>[] = [];

beforeAll(async () => {
  if (skip) return;
  assertBuilt();
  mkdirSync(SHOTS, { recursive: true });
  project = makeProject(['slow.mjs', 'report.mjs']);
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  for (const s of servers) s.child.kill('SIGINT');
  await Promise.all(servers.map((s) => s.done));
  await browser?.close();
  project?.cleanup();
}, 30_000);

/** Starts `cairn ui` on a free port; resolves with the URL it printed. */
async function startUi(prefix: string, args: readonly string[] = []): Promise<{ url: string; server: ReturnType<typeof cairnAsync> }> {
  mkdirSync(prefix, { recursive: true });
  const server = cairnAsync(project.dir, ['ui', '--prefix', prefix, '--port', '0', ...args]);
  servers.push(server);
  await waitFor(server.output, (o) => /Open http\S+/.test(o), 30_000);
  return { url: /Open (http\S+)/.exec(server.output())![1]!, server };
}

const ui = <T>(page: Page, f: string): Promise<T> => page.evaluate(`(() => { const u = globalThis.cairnUi; return ${f}; })()`) as Promise<T>;
const ready = (page: Page, view: string) => page.waitForFunction((v) => (globalThis as unknown as { cairnUi?: { ready: boolean; view: string } }).cairnUi?.ready === true && (globalThis as unknown as { cairnUi: { view: string } }).cairnUi.view === v, view, { timeout: 30_000 });

/** A run journal of `n` steps (loaders, shards that each read one loader, one merge of every shard), all succeeded, plus `extra` step names. */
async function syntheticRun(prefix: string, runId: string, n: number, extra: readonly string[] = []): Promise<void> {
  const t = Date.now();
  const loaders = Math.max(1, Math.floor(n / 100));
  const steps: { name: string; path: string; deps: number[] }[] = [];
  for (let i = 0; i < loaders; i++) steps.push({ name: 'load', path: `${prefix}/load/v1-${String(i).padStart(9, '0')}`, deps: [] });
  while (steps.length < n - 1 - extra.length) steps.push({ name: 'shard', path: `${prefix}/shard/v1-${String(steps.length).padStart(9, '0')}`, deps: [steps.length % loaders] });
  for (const name of extra) steps.push({ name, path: `${prefix}/odd/v1-${steps.length}`, deps: [0] });
  steps.push({ name: 'merge', path: `${prefix}/merge/v1-final`, deps: steps.map((_, i) => i) });
  const lines: JournalEntry[] = [
    { type: 'run-started', runId, prefix, time: t },
    { type: 'plan', runId, time: t, host: 'h', user: 'u', targets: ['merge'], steps },
  ];
  for (const s of steps) {
    lines.push({ type: 'step', runId, step: s.name, path: s.path, state: 'running', attempt: 1, time: t + 1 });
    lines.push({ type: 'step', runId, step: s.name, path: s.path, state: 'succeeded', attempt: 1, time: t + 2 });
  }
  lines.push({ type: 'run-finished', runId, prefix, time: t + 3 });
  mkdirSync(journalDir(prefix), { recursive: true });
  writeFileSync(journalFile(prefix, runId), lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
}

describe.skipIf(skip)('cairn ui', () => {
  it('an empty store shows an empty state; a run started while the page is open turns green live', async () => {
    const prefix = join(project.dir, 'live');
    const { url } = await startUi(prefix);
    const { page, errors } = await openPage(browser, url);
    await ready(page, 'runs');
    expect(await page.locator('.empty').isVisible()).toBe(true);
    await page.screenshot({ path: join(SHOTS, 'runs-empty.png') });
    await page.evaluate(() => ((globalThis as unknown as { marker: number }).marker = 42)); // gone if the page reloads
    const run = cairnAsync(project.dir, ['run', 'slow.mjs', '--prefix', prefix]);
    const row = page.locator('tr[data-run] a').first();
    await row.waitFor({ timeout: 30_000 });
    await row.click();
    await ready(page, 'run');
    const seen = new Set<string>();
    await page.waitForFunction(() => (globalThis as unknown as { cairnUi: { steps: { state: string }[] } }).cairnUi.steps.length === 3, undefined, { timeout: 30_000 });
    const until = Date.now() + 45_000;
    for (;;) {
      const states = await ui<string[]>(page, 'u.steps.map((s) => s.state)');
      states.forEach((s) => seen.add(s));
      if (states.every((s) => s === 'succeeded')) break;
      if (Date.now() > until) throw new Error(`steps did not all succeed: ${states.join(', ')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(await run.done.then((r) => r.code)).toBe(0);
    expect([...seen].some((s) => s !== 'succeeded')).toBe(true); // it was watched while it ran
    expect(await page.evaluate(() => (globalThis as unknown as { marker?: number }).marker)).toBe(42);
    await page.waitForFunction("document.getElementById('counts')?.textContent === '3 succeeded'", undefined, { timeout: 10_000 });
    await page.screenshot({ path: join(SHOTS, 'run-live.png') });
    expect(errors).toEqual([]);
  }, 90_000);

  it("a failed step's page shows its exit code and log tail, its usage row matches usage.json, a corrupt record is shown on its step", async () => {
    const prefix = join(project.dir, 'failed');
    expect(cairn(project.dir, ['run', 'report.mjs', '--prefix', prefix]).code).toBe(1);
    const { url } = await startUi(prefix);
    const runs = (await (await fetch(`${url}api/runs`)).json()) as { runs: { runId: string }[] };
    const runId = runs.runs[0]!.runId;
    const run = (await (await fetch(`${url}api/runs/${runId}`)).json()) as { prefix: string; stepList: { name: string; key: string }[] };
    const fit = run.stepList.findIndex((s) => s.name === 'fit');
    const { page, errors } = await openPage(browser, `${url}#/run/${runId}/step/${fit}`);
    await ready(page, 'step');
    expect(await page.locator('#attempts td[data-k="exit"]').first().textContent()).toBe('exit 1');
    expect(await page.locator('#log').textContent()).toContain('fit: gradient exploded at step 17');
    expect(await page.locator('#error').textContent()).toContain('loss is NaN after 17 steps');
    const usage = JSON.parse(readFileSync(join(prefix, run.stepList[fit]!.key, '.cairn', 'attempt-1', 'usage.json'), 'utf8')) as { cpuMs: number; peakMemoryBytes: number };
    expect(Number(await page.locator('#usage td[data-k="cpu"]').first().getAttribute('data-v'))).toBe(usage.cpuMs);
    expect(Number(await page.locator('#usage td[data-k="mem"]').first().getAttribute('data-v'))).toBe(usage.peakMemoryBytes);
    await page.screenshot({ path: join(SHOTS, 'step-failed.png'), fullPage: true });
    // The trace has the same numbers, and exports as CSV.
    const csv = await (await fetch(`${url}api/runs/${runId}/trace.csv`)).text();
    expect(csv.split('\n').find((l) => l.startsWith('fit,'))).toContain(`,${usage.cpuMs},${usage.peakMemoryBytes},rss,1`);
    // The trace table sorts by a column (CPU time, highest first) and links its exports.
    await page.goto(`${url}#/run/${runId}/trace`);
    await ready(page, 'trace');
    await page.click('#trace th[data-col="cpu_ms"]');
    const rows = (await (await fetch(`${url}api/runs/${runId}/trace`)).json()) as { name: string; cpu_ms: number | null }[];
    const byCpu = [...rows].sort((a, b) => (b.cpu_ms ?? -1) - (a.cpu_ms ?? -1)).map((r) => r.name);
    expect(await page.locator('#trace tbody tr td:first-child').allTextContents()).toEqual(byCpu);
    expect(await page.locator('#csv').getAttribute('href')).toBe(`api/runs/${runId}/trace.csv`);
    await page.screenshot({ path: join(SHOTS, 'trace.png') });
    await page.goto(`${url}#/`);
    await ready(page, 'runs');
    await page.screenshot({ path: join(SHOTS, 'runs.png') });
    // A corrupt record: the step says so, the rest of the run still renders.
    const prep = run.stepList.findIndex((s) => s.name === 'prep');
    writeFileSync(join(prefix, run.stepList[prep]!.key, '.artifact.json'), '{ not json');
    await page.goto(`${url}#/run/${runId}/step/${prep}`);
    await page.reload();
    await ready(page, 'step');
    expect(await page.locator('#problem').textContent()).toMatch(/Corrupt or unreadable/);
    await page.goto(`${url}#/run/${runId}`);
    await ready(page, 'run');
    expect(await ui<number>(page, 'u.steps.length')).toBe(4);
    expect(errors).toEqual([]);
  }, 60_000);

  it('a 30,000-step run renders and a search finds a step; a step named like markup renders as text', async () => {
    const prefix = join(project.dir, 'big');
    const evil = '<img src=x onerror=alert(1)>';
    await syntheticRun(prefix, 'big-run', 30_000, [evil]);
    const { url } = await startUi(prefix);
    const { page, errors } = await openPage(browser, `${url}#/run/big-run`);
    const dialogs: string[] = [];
    page.on('dialog', (d) => (dialogs.push(d.message()), void d.dismiss()));
    await ready(page, 'run');
    expect(await ui<number>(page, 'u.steps.length')).toBe(30_000);
    expect(await ui<number>(page, 'u.dag.lastDraw')).toBeGreaterThan(0);
    await page.screenshot({ path: join(SHOTS, 'run-30k.png') });
    await page.fill('#search', 'shard/v1-000012345');
    expect(await page.locator('#found').textContent()).toBe('1 found');
    expect(await page.locator('#side .mono').textContent()).toBe('shard/v1-000012345');
    await page.screenshot({ path: join(SHOTS, 'run-30k-search.png') });
    // The markup-named step: found by search, shown as text on its page.
    await page.fill('#search', 'onerror');
    expect(await page.locator('#found').textContent()).toBe('1 found');
    expect(await page.locator('#side h3').textContent()).toBe(evil);
    await page.click('#open-step');
    await ready(page, 'step');
    expect(await page.locator('#step-name').textContent()).toContain(evil);
    expect(await page.locator('img').count()).toBe(0);
    await page.screenshot({ path: join(SHOTS, 'step-markup-name.png') });
    expect(dialogs).toEqual([]);
    expect(errors).toEqual([]);
  }, 60_000);

  it('bound to a non-loopback address, every request without the token is refused (the live stream too)', async () => {
    const prefix = join(project.dir, 'token');
    const { url } = await startUi(prefix, ['--host', '0.0.0.0']);
    const token = new URL(url).searchParams.get('token');
    expect(token).toMatch(/^[\w-]{40,}$/);
    const port = new URL(url).port;
    for (const path of ['/', '/api/runs', '/api/stream', '/api/info']) {
      expect((await fetch(`http://127.0.0.1:${port}${path}`)).status, path).toBe(401);
      expect((await fetch(`http://127.0.0.1:${port}${path}?token=wrong`)).status, path).toBe(401);
    }
    expect((await fetch(`http://127.0.0.1:${port}/api/runs`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${port}/api/runs/x/cancel`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'x-cairn-action': '1' } })).status).toBe(403); // read-only
    // The page opened with the printed URL works (the token is kept in a cookie).
    const { page, errors } = await openPage(browser, url.replace('0.0.0.0', '127.0.0.1'));
    await ready(page, 'runs');
    expect(errors).toEqual([]);
  }, 30_000);

  it('with --allow-actions: a running run is cancelled through the store, and a dead runner\'s lease is unlocked', async () => {
    const prefix = join(project.dir, 'actions');
    const { url } = await startUi(prefix, ['--allow-actions']);
    const { page, errors } = await openPage(browser, url);
    page.on('dialog', (d) => void d.accept());
    await ready(page, 'runs');
    const states = () => ui<string[]>(page, 'u.steps.map((s) => s.state)');
    const openRun = async (except = '') => {
      const row = page.locator(`tr[data-run]:not([data-run="${except}"]) a`).first();
      await row.waitFor({ timeout: 30_000 });
      await row.click();
      await ready(page, 'run');
      await page.waitForFunction(() => (globalThis as unknown as { cairnUi: { steps: { state: string }[] } }).cairnUi.steps.some((s) => s.state === 'running'), undefined, { timeout: 30_000 });
    };
    // Cancel: the runner polls its cancel-request file and stops as on Ctrl-C.
    const a = cairnAsync(project.dir, ['run', 'slow.mjs', '--prefix', prefix]);
    await openRun();
    const first = await ui<string>(page, 'u.run.runId');
    await page.click('#cancel');
    const ra = await a.done;
    expect(ra.code, ra.stdout + ra.stderr).toBe(130);
    expect(ra.stdout + ra.stderr).toContain('Cancel requested through the store (cairn ui)');
    await page.waitForFunction(() => (globalThis as unknown as { cairnUi: { steps: { state: string }[] } }).cairnUi.steps.some((s) => s.state === 'cancelled'), undefined, { timeout: 30_000 });
    expect(await states()).not.toContain('running');
    await page.screenshot({ path: join(SHOTS, 'run-cancelled.png') });
    // Unlock: a runner killed mid-step leaves its lease; its holder is dead, so the lease is stale.
    rmSync(prefix, { recursive: true, force: true });
    await page.goto(`${url}#/`);
    await page.reload();
    await ready(page, 'runs');
    const b = cairnAsync(project.dir, ['run', 'slow.mjs', '--prefix', prefix], { FX_NAP_MS: '20000' });
    await openRun(first);
    const running = (await states()).indexOf('running');
    const runId = await ui<string>(page, 'u.run.runId');
    // The running attempt's log is followed on its page.
    await page.goto(`${url}#/run/${runId}/step/${running}`);
    await ready(page, 'step');
    await page.waitForFunction("/napping 20000 ms/.test(document.getElementById('log')?.textContent ?? '')", undefined, { timeout: 15_000 });
    expect(await page.locator('h2', { hasText: 'Log' }).textContent()).toContain('following');
    b.child.kill('SIGKILL');
    await b.done;
    await page.reload();
    await ready(page, 'step');
    await page.click('#unlock');
    await page.waitForFunction(() => /Stale lease cleared/.test((globalThis as unknown as { cairnUi: { banner(): string } }).cairnUi.banner()), undefined, { timeout: 10_000 });
    const detail = (await (await fetch(`${url}api/runs/${runId}/steps/${running}`)).json()) as { lease: unknown };
    expect(detail.lease).toBeNull();
    expect(errors).toEqual([]);
  }, 90_000);

  it('a journal naming paths outside the prefix gets nothing from there (record, logs, usage)', async () => {
    const prefix = join(project.dir, 'escape');
    const outside = join(project.dir, 'outside');
    mkdirSync(join(outside, '.cairn', 'logs'), { recursive: true });
    mkdirSync(join(outside, '.cairn', 'attempt-1'), { recursive: true });
    writeFileSync(join(outside, '.cairn', 'logs', 'attempt-1.stdout'), 'SECRET-LOG\n');
    writeFileSync(join(outside, '.cairn', 'attempt-1', 'usage.json'), JSON.stringify({ executor: 'process', cpuMs: 4242 }));
    mkdirSync(join(prefix, '.cairn', 'runs'), { recursive: true });
    const ev = (o: object) => `${JSON.stringify({ runId: 'esc', time: 1, ...o })}\n`;
    writeFileSync(
      join(prefix, '.cairn', 'runs', 'esc.jsonl'),
      ev({ type: 'run-started', prefix }) +
        ev({ type: 'step', step: 'evil', path: outside, state: 'running', attempt: 1, logs: { stdout: join(outside, '.cairn/logs/attempt-1.stdout'), stderr: join(outside, 'x') } }) +
        ev({ type: 'step', step: 'inner', path: `${prefix}/a/../../outside`, state: 'running', attempt: 1 }),
    );
    const { url } = await startUi(prefix);
    for (const i of [0, 1]) {
      const detail = (await (await fetch(`${url}api/runs/esc/steps/${i}`)).json()) as { problem?: string; attempts: unknown[] };
      expect(detail.problem, JSON.stringify(detail)).toMatch(/not under the store prefix/);
      expect(detail.attempts).toEqual([]);
      const log = await (await fetch(`${url}api/runs/esc/steps/${i}/log`)).text();
      expect(log).not.toContain('SECRET');
    }
    expect(await (await fetch(`${url}api/runs/esc/trace.csv`)).text()).not.toContain('4242');
  }, 30_000);

  it('a run that left no journal (journal: false, or a runner older than the journal) is listed and drawn from its records', async () => {
    const prefix = join(project.dir, 'api');
    writeFileSync(join(project.dir, 'api-run.mjs'), `import { StepRunner } from '@cairn/runner';\nimport { targets } from './report.mjs';\nawait new StepRunner({ prefix: process.argv[2], journal: false }).run(targets);\n`);
    const r = spawnSync(process.execPath, ['api-run.mjs', prefix], { cwd: project.dir, env: { ...process.env, FX_OK: '1' }, encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    const { url } = await startUi(prefix);
    const { page, errors } = await openPage(browser, url);
    await ready(page, 'runs');
    expect(await page.locator('tr[data-run] .counts').textContent()).toBe('4 succeeded (from step records: no journal)');
    await page.click('tr[data-run] a');
    await ready(page, 'run');
    const steps = await ui<{ name: string; deps: number[] }[]>(page, 'u.steps');
    const named = Object.fromEntries(steps.map((s) => [s.name, s.deps.map((d) => steps[d]!.name)]));
    expect(named).toEqual({ prep: [], fit: ['prep'], score: ['fit'], summary: ['score'] });
    expect(errors).toEqual([]);
  }, 60_000);

  it('a port in use is a clear CLI error', async () => {
    const prefix = join(project.dir, 'port');
    const { url } = await startUi(prefix);
    const r = cairn(project.dir, ['ui', '--prefix', prefix, '--port', new URL(url).port]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/already in use.*--port/s);
  }, 30_000);
});
