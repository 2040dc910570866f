/**
 * `cairn ui` on an s3:// prefix, against a real RADOS Gateway, in headless Chromium: an empty
 * prefix shows the empty state, a run appears and its steps end green without a reload, a
 * step's usage row matches the usage.json in the bucket (or says "not measured" when there is
 * none), and a gateway that goes down shows a banner that goes away when it comes back.
 * Runs the BUILT CLI. Screenshots go to .test-results/ui/.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumPath, launchChromium, openPage } from '../../cli/test/helpers/browser.js';
import { StepSpec } from '@cairn/core';
import { StepRunner } from '@cairn/runner';
import { s3StoreFactory, S3Primitives } from '../src/index.js';
import { clientOptions, freshPrefix, haveRgw, useGateway, writeS3Project } from './helpers.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const BIN = join(REPO, 'packages/cli/dist/bin.js');
const SHOTS = join(REPO, '.test-results', 'ui');
const noChromium = chromiumPath() === undefined && !process.env.CI;
if (noChromium) console.warn('SKIPPED: the cairn ui tests need Chromium (apt-get install -y --no-install-recommends chromium).');

describe.skipIf(!haveRgw || noChromium)('cairn ui on an s3:// prefix, against a real RADOS Gateway', () => {
  const gw = useGateway();
  const project = mkdtempSync(join(tmpdir(), 'cairn-s3-ui-'));
  const children: ChildProcess[] = [];
  let browser: Browser;
  let prefix: string;
  let s3: S3Primitives;

  beforeAll(async () => {
    const rgw = gw.get();
    prefix = freshPrefix(rgw, 'ui');
    s3 = new S3Primitives(clientOptions(rgw));
    writeS3Project(project, rgw, prefix, { retry: { maxAttempts: 2, baseDelayMs: 50 }, connectTimeoutMs: 1000, requestTimeoutMs: 3000 });
    mkdirSync(SHOTS, { recursive: true });
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    for (const c of children) c.kill('SIGINT');
    await browser?.close();
    s3?.destroy();
    rmSync(project, { recursive: true, force: true });
  });

  /** Starts `cairn …args` in the project with the gateway's credentials; collects output. */
  function cairn(args: readonly string[]): { child: ChildProcess; output: () => string; done: Promise<number | null> } {
    const rgw = gw.get();
    const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', AWS_ACCESS_KEY_ID: rgw.accessKeyId, AWS_SECRET_ACCESS_KEY: rgw.secretAccessKey, AWS_EC2_METADATA_DISABLED: 'true', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };
    for (const k of ['CAIRN_PREFIX', 'CAIRN_CONFIG', 'AWS_ENDPOINT_URL', 'AWS_PROFILE', 'NODE_OPTIONS']) delete env[k];
    const child = spawn(process.execPath, [BIN, ...args], { cwd: project, env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    return { child, output: () => out, done: new Promise((resolve) => child.on('close', resolve)) };
  }

  const ready = (page: Page, view: string) =>
    page.waitForFunction((v) => (globalThis as unknown as { cairnUi?: { ready: boolean; view: string } }).cairnUi?.ready === true && (globalThis as unknown as { cairnUi: { view: string } }).cairnUi.view === v, view, { timeout: 30_000 });

  it('empty state, a run seen to the end without a reload, usage as in the bucket, a banner while the gateway is down', async () => {
    const ui = cairn(['ui', '--port', '0']);
    const until = Date.now() + 30_000;
    while (!/Open (http\S+)/.test(ui.output())) {
      if (Date.now() > until) throw new Error(ui.output());
      await new Promise((r) => setTimeout(r, 50));
    }
    const url = /Open (http\S+)/.exec(ui.output())![1]!;
    const { page, errors } = await openPage(browser, url);
    await ready(page, 'runs');
    expect(await page.locator('.empty').isVisible()).toBe(true);

    const run = cairn(['run', 'pipeline.mjs']);
    expect(await run.done, run.output()).toBe(0);
    const row = page.locator('tr[data-run] a').first();
    await row.waitFor({ timeout: 30_000 });
    await row.click();
    await ready(page, 'run');
    await page.waitForFunction("document.getElementById('counts')?.textContent === '3 succeeded'", undefined, { timeout: 30_000 });
    await page.screenshot({ path: join(SHOTS, 's3-run.png') });

    // A step's usage row: what the bucket's usage.json says, or "not measured".
    const steps = await page.evaluate(() => (globalThis as unknown as { cairnUi: { steps: { name: string; key: string }[] } }).cairnUi.steps);
    const train = steps.findIndex((s) => s.name === 'train');
    await page.fill('#search', 'train');
    await page.click('#open-step');
    await ready(page, 'step');
    expect(await page.locator('#step-name').textContent()).toContain('train');
    const { bucket, key } = s3.locate(`${prefix}/${steps[train]!.key}/.cairn/attempt-1/usage.json`);
    const got = await s3.objects.get(bucket, key);
    const cpu = page.locator('#usage td[data-k="cpu"]').first();
    if (got === null) expect(await page.locator('#usage tbody td').nth(1).textContent()).toBe('not measured');
    else {
      const usage = JSON.parse(Buffer.from(got.body).toString('utf8')) as { cpuMs?: number };
      expect(await cpu.getAttribute('data-v')).toBe(String(usage.cpuMs ?? ''));
    }
    await page.screenshot({ path: join(SHOTS, 's3-step.png'), fullPage: true });

    // The gateway goes away: a banner; it comes back: the banner goes.
    await page.goto(`${url}#/`);
    await ready(page, 'runs');
    await gw.get().stopGateway(true);
    await page.waitForFunction(() => /cannot be read/.test((globalThis as unknown as { cairnUi: { banner(): string } }).cairnUi.banner()), undefined, { timeout: 60_000 });
    await page.screenshot({ path: join(SHOTS, 's3-store-gone.png') });
    await gw.get().startGateway();
    await page.waitForFunction(() => (globalThis as unknown as { cairnUi: { banner(): string } }).cairnUi.banner() === '', undefined, { timeout: 60_000 });
    expect(await page.locator('tr[data-run]').count()).toBe(1);
    expect(errors).toEqual([]);
  }, 180_000);

  it("a run of a user's own StepRunner (no CLI) is listed with its counts, from the journal the runner wrote", async () => {
    const rgw = gw.get();
    const own = freshPrefix(rgw, 'script');
    const spec = new StepSpec({ name: 'scripted', hashAttrs: { at: own }, fn: () => ({ ok: true }) });
    const runner = new StepRunner({ prefix: own, stores: [s3StoreFactory()], storeOptions: { s3: { ...clientOptions(rgw), cacheDir: join(project, 'script-cache') } }, logger: { info: () => undefined, warn: () => undefined, error: () => undefined } });
    const built = await runner.run([spec]);
    const cached = await runner.run([spec]);
    const ui = cairn(['ui', '--port', '0', '--prefix', own]);
    const until = Date.now() + 30_000;
    while (!/Open (http\S+)/.test(ui.output())) {
      if (Date.now() > until) throw new Error(ui.output());
      await new Promise((r) => setTimeout(r, 50));
    }
    const url = /Open (http\S+)/.exec(ui.output())![1]!;
    const { runs } = (await (await fetch(`${url}api/runs`)).json()) as { runs: { runId: string; source: string; running: boolean; counts: Record<string, number> }[] };
    const byId = new Map(runs.map((r) => [r.runId, r]));
    expect(byId.get(built.runId)).toMatchObject({ source: 'journal', running: false, counts: { succeeded: 1 } });
    expect(byId.get(cached.runId)).toMatchObject({ source: 'journal', running: false, counts: { cached: 1 } });
  }, 120_000);
});
