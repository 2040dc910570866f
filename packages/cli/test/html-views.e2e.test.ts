/**
 * The HTML graph and report pages in headless Chromium (playwright-core driving Debian's
 * /usr/bin/chromium), checked on screenshots: boxes, arrowheads and state colours drawn, edges
 * out of boxes, the page filled, thousands of steps legible at first sight and a click on a
 * cluster answered quickly; the report's CPU time, peak memory, exit codes, errors,
 * dependency-failed steps, and a cached rerun linking the run that built it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cairn, makeProject } from './helpers/cli.js';
import { chromiumPath, launchChromium, openPage } from './helpers/browser.js';
import { countColor, countColorIn, countNonBackground, decodePng, type DecodedPng } from './helpers/png.js';

const GREEN = '#3fa34d'; // cached / succeeded
const RED = '#d93f3f'; // failed before / failed
const EDGE = '#7b8290';

interface Box {
  kind: string;
  label: string;
  size: number;
  state: string;
  x: number;
  y: number;
  w: number;
  h: number;
}
interface Edge {
  from: number;
  to: number;
  reversed: boolean;
  points: { x: number; y: number }[];
  samples: { x: number; y: number }[];
}

const skip = chromiumPath() === undefined && !process.env.CI;
if (skip) console.warn('SKIPPED: the HTML page tests need Chromium (apt-get install -y --no-install-recommends chromium).');

let project: ReturnType<typeof makeProject>;
let browser: Browser;
beforeAll(async () => {
  if (skip) return;
  assertBuilt();
  project = makeProject(['pipeline.mjs', 'skip.mjs', 'big.mjs', 'report.mjs']);
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  project?.cleanup();
});

/** Writes the graph page of `pipeline` and opens it. */
async function graphPage(pipeline: string, args: readonly string[] = ['--no-plan'], env: Record<string, string> = {}): Promise<{ page: Page; errors: string[]; loadMs: number }> {
  const out = join(project.dir, `${pipeline}-${Object.values(env).join('-')}.html`);
  const r = cairn(project.dir, ['graph', pipeline, '--format', 'html', '--out', out, ...args], env);
  expect(r.code, r.stderr).toBe(0);
  expect(readFileSync(out, 'utf8')).not.toMatch(/<script[^>]+src=|<link[^>]+href=|https?:\/\/(?!www\.w3\.org)/); // self-contained
  const t0 = Date.now();
  const { page, errors } = await openPage(browser, `file://${out}`);
  await page.waitForFunction(() => (globalThis as unknown as { cairnGraph?: unknown }).cairnGraph !== undefined, undefined, { timeout: 30_000 });
  return { page, errors, loadMs: Date.now() - t0 };
}

const boxes = (page: Page) => page.evaluate(() => (globalThis as unknown as { cairnGraph: { units(): Box[] } }).cairnGraph.units());
const edges = (page: Page) => page.evaluate(() => (globalThis as unknown as { cairnGraph: { edges(): Edge[] } }).cairnGraph.edges());
const shot = async (page: Page): Promise<DecodedPng> => decodePng(await page.screenshot());
const text = async (l: Locator): Promise<string> => ((await l.textContent()) ?? '').replace(/\s+/g, ' ');

/** Edge-coloured pixels in the 10×10 square just left of where an edge enters its dependent. */
function arrowPixels(png: DecodedPng, e: Edge): number {
  const tip = e.reversed ? e.points[0]! : e.points[e.points.length - 1]!;
  const x = e.reversed ? tip.x + 1 : tip.x - 11;
  return countColorIn(png, EDGE, { x, y: tip.y - 5, w: 10, h: 10 });
}

/** Edge-coloured pixels around the middle of an edge's last stretch (a plain line there). */
function linePixels(png: DecodedPng, e: Edge): number {
  const s = e.samples;
  const mid = s[s.length - 8]!;
  return countColorIn(png, EDGE, { x: mid.x - 5, y: mid.y - 5, w: 10, h: 10 });
}

function inside(p: { x: number; y: number }, b: Box, margin = 1): boolean {
  return p.x > b.x + margin && p.x < b.x + b.w - margin && p.y > b.y + margin && p.y < b.y + b.h - margin;
}

describe.skipIf(skip)('the graph page', () => {
  it('draws plan states, arrowheads on every edge, and fills the page', async () => {
    const prefix = join(project.dir, 'graph-store');
    expect(cairn(project.dir, ['run', 'pipeline.mjs', '--prefix', prefix], { FX_FAIL: '1' }).code).toBe(1);
    const { page, errors } = await graphPage('pipeline.mjs', ['--prefix', prefix]);
    const png = await shot(page);
    const units = await boxes(page);
    expect(units.map((u) => u.state)).toEqual(['cached', 'failed-before', 'failed-before']);
    expect(countColor(png, GREEN)).toBeGreaterThan(4000); // prepare: cached
    expect(countColor(png, RED)).toBeGreaterThan(8000); // train, evaluate: failed before
    // Filled: the drawing spans (nearly) the whole width of a 1200 px page.
    const x0 = Math.min(...units.map((u) => u.x));
    const x1 = Math.max(...units.map((u) => u.x + u.w));
    expect(x1 - x0).toBeGreaterThan(0.85 * 1200);
    for (const e of await edges(page)) {
      expect(arrowPixels(png, e), 'an arrowhead is a filled triangle').toBeGreaterThan(30);
      expect(linePixels(png, e), 'a plain line is thin').toBeLessThan(30);
    }
    expect(errors).toEqual([]);
    await page.close();
  });

  it('routes edges that skip layers between boxes, never through one', async () => {
    const { page, errors } = await graphPage('skip.mjs');
    const units = await boxes(page);
    const es = await edges(page);
    expect(units).toHaveLength(6);
    expect(es).toHaveLength(8);
    const png = await shot(page);
    for (const e of es) {
      for (const p of e.samples) for (const b of units) expect(inside(p, b), `edge ${units[e.from]!.label} -> ${units[e.to]!.label} at ${p.x},${p.y} runs through ${b.label}`).toBe(false);
      expect(arrowPixels(png, e)).toBeGreaterThan(25);
    }
    // Boxes do not overlap one another.
    for (const a of units) for (const b of units) if (a !== b) expect(a.x + a.w <= b.x || b.x + b.w <= a.x || a.y + a.h <= b.y || b.y + b.h <= a.y).toBe(true);
    expect(errors).toEqual([]);
    await page.close();
  });

  for (const n of [3000, 30000]) {
    it(`opens ${n.toLocaleString('en')} steps as a few dozen legible clusters that expand on a click`, async () => {
      const { page, errors, loadMs } = await graphPage('big.mjs', ['--no-plan'], { FX_BIG_N: String(n) });
      const units = await boxes(page);
      expect(units.length).toBeGreaterThanOrEqual(8);
      expect(units.length).toBeLessThanOrEqual(60);
      expect(units.reduce((s, u) => s + u.size, 0)).toBe(n);
      // Legible: every box at least 27 px tall on screen (13 px labels at 0.8), inside the page, none overlapping.
      for (const u of units) {
        expect(u.h).toBeGreaterThanOrEqual(27);
        expect(u.x).toBeGreaterThanOrEqual(0);
        expect(u.x + u.w).toBeLessThanOrEqual(1200);
        expect(u.y).toBeGreaterThanOrEqual(44);
        expect(u.y + u.h).toBeLessThanOrEqual(800);
      }
      expect(units.some((u) => /^download-shard 00000–/.test(u.label))).toBe(true);
      const png = await shot(page);
      // Labels are drawn: white text pixels inside the boxes.
      const white = units.reduce((s, u) => s + countColorIn(png, '#ffffff', { x: u.x + 4, y: u.y + 4, w: u.w - 8, h: u.h - 12 }, 30), 0);
      expect(white / units.length).toBeGreaterThan(40);
      expect(countNonBackground(png, [255, 255, 255])).toBeGreaterThan(60_000);
      // A click on the biggest cluster replaces it with its parts, quickly.
      const target = [...units].sort((a, b) => b.size - a.size)[0]!;
      const t0 = Date.now();
      await page.mouse.click(target.x + target.w / 2, target.y + target.h / 2);
      const after = await boxes(page);
      const clickMs = Date.now() - t0;
      const rebuildMs = await page.evaluate(() => (globalThis as unknown as { cairnGraph: { lastMs(): number } }).cairnGraph.lastMs());
      expect(after.length).toBeGreaterThan(units.length);
      expect(after.map((u) => u.label)).not.toContain(target.label);
      expect(after.reduce((s, u) => s + u.size, 0)).toBe(n);
      expect(rebuildMs).toBeLessThan(500);
      expect(clickMs).toBeLessThan(2000);
      expect(await text(page.locator('#detail'))).toContain('Expanded');
      expect(errors).toEqual([]);
      console.log(`graph of ${n} steps: loaded and drawn in ${loadMs} ms; a click re-laid out ${after.length} boxes in ${rebuildMs.toFixed(0)} ms (${clickMs} ms round trip)`);
      await page.close();
    }, 90_000);
  }
});

describe.skipIf(skip)('the report page', () => {
  const prefix = () => join(project.dir, 'report-store');

  it("shows each step's CPU time, peak memory and exit code, failures with their errors, and dependency-failed steps", async () => {
    const r = cairn(project.dir, ['run', 'report.mjs', '--prefix', prefix()]);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    const out = join(project.dir, 'report.html');
    const rep = cairn(project.dir, ['report', '--prefix', prefix(), '--out', out]);
    expect(rep.code, rep.stderr).toBe(0);
    const { page, errors } = await openPage(browser, `file://${out}`, 1200, 1400);
    const rows = await page.$$eval('#steps tr', (trs) => trs.slice(1).map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')));
    const row = (name: string) => rows.find((c) => c[0] === name)!;
    // columns: step, output, outcome, attempts, wall, cpu, peak memory, exit, where, error
    expect(row('fit')[2]).toBe('failed');
    expect(row('fit')[5]).toMatch(/\d/); // cpu of the worker process
    expect(row('fit')[6]).toMatch(/MiB rss/);
    expect(row('fit')[7]).toBe('1'); // the worker process exited 1
    expect(row('prep')[2]).toBe('succeeded');
    expect(row('prep')[5]).toMatch(/\d/); // thread cpu
    expect(row('prep')[6]).toMatch(/MiB heap/);
    expect(row('score')[2]).toBe('dep-failed');
    expect(await text(page.locator('#dep-failed'))).toContain('score');
    expect(await text(page.locator('#dep-failed'))).toContain('summary');
    expect(await text(page.locator('#dep-failed'))).toContain('dependency fit failed');
    const failure = page.locator('details').filter({ hasText: 'fit' }).first();
    expect(await text(failure)).toContain('loss is NaN after 17 steps');
    expect(await text(failure.locator('pre.error'))).toContain('at '); // the stack
    expect(await text(failure)).toContain('gradient exploded at step 17'); // the log tail
    const png = await shot(page);
    expect(countColor(png, GREEN)).toBeGreaterThan(200); // prep's bar
    expect(countColor(png, RED)).toBeGreaterThan(200); // fit's bar
    expect(errors).toEqual([]);
    await page.close();
  });

  it('after a fully cached rerun says so and links the report of the run that built the steps', async () => {
    const store = join(project.dir, 'cached-store');
    const first = cairn(project.dir, ['run', 'report.mjs', '--prefix', store], { FX_OK: '1' });
    expect(first.code, first.stderr).toBe(0);
    const builder = /\(run ([\w-]+)\)/.exec(first.stdout)![1]!;
    expect(cairn(project.dir, ['run', 'report.mjs', '--prefix', store], { FX_OK: '1' }).code).toBe(0);
    const out = join(project.dir, 'cached.html');
    const rep = cairn(project.dir, ['report', '--prefix', store, '--out', out]);
    expect(rep.code, rep.stderr).toBe(0);
    expect(rep.stdout).toContain('the report(s) of 1 run(s) that built its cached steps');
    const { page, errors } = await openPage(browser, `file://${out}`);
    expect(await text(page.locator('#cached-notice'))).toContain('Nothing ran in this run: the 1 step(s) it needed were already in the store'); // summary (its dependencies are pruned, not examined)
    const link = page.locator('#cached-notice a');
    expect(await text(link)).toBe(`run ${builder}`);
    await link.click();
    await page.waitForURL(`**/cached.${builder}.html`);
    expect(await text(page.locator('h1'))).toBe(`cairn run ${builder}`);
    const png = await shot(page);
    expect(countColor(png, GREEN)).toBeGreaterThan(300); // the builder run's timeline bars
    expect(errors).toEqual([]);
    await page.close();
  });
});
