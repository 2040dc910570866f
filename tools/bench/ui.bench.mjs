#!/usr/bin/env node
// Benchmark of `cairn ui` (issue 31), in headless Chromium (Debian's /usr/bin/chromium):
//   render  time from opening a 30,000-step run to its first full render (page loaded, run
//           fetched, DAG laid out and drawn), cold (the server's first read of the journal) and
//           warm; and the server's resident memory (VmRSS, peak VmHWM) once it holds the run.
//   live    the live stream's cost on the runner: a 100,000-step in-memory run (a child process
//           journalling as `cairn run` does) alone, followed through `cairn ui`'s live stream by
//           a plain reader (the server's cost), and followed by a Chromium page on the same
//           machine (server and browser), alternating, ROUNDS times each. Target: within 5 %.
// Needs the built CLI (`npx nx run-many -t build`) and Chromium.
//   node tools/bench/ui.bench.mjs [--steps 30000] [--live-steps 100000] [--rounds 3] [--render-only]
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const root = fileURLToPath(new URL('../..', import.meta.url));
const BIN = join(root, 'packages/cli/dist/bin.js');
const CHILD = fileURLToPath(new URL('./ui-run-child.mjs', import.meta.url));
const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const STEPS = arg('steps', 30_000);
const LIVE = arg('live-steps', 100_000);
const ROUNDS = arg('rounds', 3);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const load = () => `load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`;
if (!existsSync(BIN)) throw new Error(`build first: ${BIN} is missing (npx nx run-many -t build)`);
const tmp = mkdtempSync(join(tmpdir(), 'cairn-ui-bench-'));

/** Runs the journalling child; resolves with the run's ms. */
function runChild(prefix, n, tag) {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, [CHILD, prefix, String(n), tag], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    c.stdout.on('data', (d) => (out += d));
    c.on('close', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').at(-1)).ms) : reject(new Error(`child exited ${code}`))));
  });
}

/** Starts `cairn ui` on a free port. */
async function startUi(prefix) {
  const child = spawn(process.execPath, [BIN, 'ui', '--prefix', prefix, '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, NO_COLOR: '1' } });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  const until = Date.now() + 30_000;
  while (!/Open (http\S+)/.test(out)) {
    if (Date.now() > until) throw new Error(`cairn ui did not start: ${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return { child, url: /Open (http\S+)/.exec(out)[1] };
}
const stop = (child) => new Promise((r) => (child.once('close', r), child.kill('SIGINT')));
const memory = (pid) => {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(s)?.[1] ?? NaN) / 1024;
  return { rssMiB: kb('VmRSS'), peakMiB: kb('VmHWM') };
};
const ready = (page) => page.waitForFunction(() => globalThis.cairnUi?.ready === true && globalThis.cairnUi.view === 'run' && globalThis.cairnUi.dag?.lastDraw > 0, undefined, { timeout: 120_000 });

const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'] });
try {
  console.log(`cairn ui bench (${load()})`);
  // 1. First full render of a 30k-step run.
  {
    const prefix = join(tmp, 'render');
    await runChild(prefix, STEPS, 'render');
    const runId = readdirSync(join(prefix, '.cairn/runs'))[0].replace(/\.jsonl$/, '');
    const { child, url } = await startUi(prefix);
    const times = [];
    let frames;
    for (let r = 0; r < ROUNDS + 1; r++) {
      const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      const t0 = performance.now();
      await page.goto(`${url}#/run/${runId}`);
      await ready(page);
      times.push(performance.now() - t0);
      if (r === ROUNDS) {
        // One pan/zoom frame: a full redraw, with the whole graph in view and zoomed in on a step.
        frames = await page.evaluate(() => {
          const dag = globalThis.cairnUi.dag;
          const frame = () => {
            const xs = [];
            for (let k = 0; k < 15; k++) {
              const t = performance.now();
              dag.ox += 1;
              dag.draw();
              xs.push(performance.now() - t);
            }
            return xs.sort((a, b) => a - b)[7];
          };
          dag.fit();
          const whole = frame();
          // Zoomed so every visible step is a cell of >= 2 px (the densest drawing).
          dag.scale = Math.max(dag.scale, 2 / 12);
          const cells = frame();
          dag.centerOn(Math.floor(dag.steps.length / 2));
          const zoomed = frame();
          return { whole, cells, zoomed };
        });
      }
      await page.close();
    }
    const mem = memory(child.pid);
    console.log(`render  ${STEPS} steps: first full render cold ${times[0].toFixed(0)} ms, warm median ${median(times.slice(1)).toFixed(0)} ms (${ROUNDS} rounds); server RSS ${mem.rssMiB.toFixed(0)} MiB (peak ${mem.peakMiB.toFixed(0)} MiB); one pan/zoom frame ${frames.whole.toFixed(1)} ms whole graph, ${frames.cells.toFixed(1)} ms every step a cell, ${frames.zoomed.toFixed(1)} ms zoomed in`);
    await stop(child);
  }
  if (!process.argv.includes('--render-only'))
  // 2. The runner alone, followed by a live-stream reader (the server's cost), and followed by a
  //    Chromium page on this same machine (server and browser: a viewer usually runs elsewhere).
  {
    const alone = [];
    const stream = [];
    const page = [];
    await runChild(join(tmp, 'warmup'), Math.min(LIVE, 20_000), 'warmup');
    /** The run id once its journal appears under `prefix`. */
    const runIdOf = async (prefix) => {
      for (;;) {
        const f = existsSync(join(prefix, '.cairn/runs')) ? readdirSync(join(prefix, '.cairn/runs')).find((x) => x.endsWith('.jsonl')) : undefined;
        if (f !== undefined) return f.replace(/\.jsonl$/, '');
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    for (let r = 0; r < ROUNDS; r++) {
      alone.push(await runChild(join(tmp, `alone-${r}`), LIVE, `alone-${r}`));
      {
        const prefix = join(tmp, `stream-${r}`);
        const { child, url } = await startUi(prefix);
        const running = runChild(prefix, LIVE, `stream-${r}`);
        const ac = new AbortController();
        const reading = runIdOf(prefix).then(async (id) => {
          const res = await fetch(`${url}api/stream?run=${id}`, { signal: ac.signal });
          for await (const _ of res.body) void _;
        }).catch(() => {});
        stream.push(await running);
        ac.abort();
        await reading;
        await stop(child);
      }
      {
        const prefix = join(tmp, `page-${r}`);
        const { child, url } = await startUi(prefix);
        const p = await browser.newPage({ viewport: { width: 1400, height: 900 } });
        await p.goto(url);
        const running = runChild(prefix, LIVE, `page-${r}`);
        // Follow the run as a user would: open it as soon as it is listed.
        const row = p.locator('tr[data-run] a').first();
        await row.waitFor({ timeout: 60_000 }).then(() => row.click()).catch(() => {});
        page.push(await running);
        await p.close();
        await stop(child);
      }
    }
    const [a, b, c] = [alone, stream, page].map(median);
    const list = (xs) => xs.map((x) => x.toFixed(0)).join(', ');
    console.log(`live    ${LIVE} in-memory steps (medians of ${ROUNDS}; target within 5 %):`);
    console.log(`        alone                              ${a.toFixed(0)} ms  [${list(alone)}]`);
    console.log(`        followed by a live-stream reader   ${b.toFixed(0)} ms  ${((b / a - 1) * 100).toFixed(1)} %  [${list(stream)}]`);
    console.log(`        followed by a Chromium page, here  ${c.toFixed(0)} ms  ${((c / a - 1) * 100).toFixed(1)} %  [${list(page)}]`);
  }
  console.log(load());
} finally {
  await browser.close();
  rmSync(tmp, { recursive: true, force: true });
}
