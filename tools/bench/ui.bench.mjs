#!/usr/bin/env node
// Benchmark of `cairn ui` (issue 31), in headless Chromium (Debian's /usr/bin/chromium):
//   render  time from opening a 30,000-step run to its first full render (page loaded, run
//           fetched, DAG laid out and drawn), cold (the server's first read of the journal) and
//           warm; and the server's resident memory (VmRSS, peak VmHWM) once it holds the run.
//   journal the run journal's cost on the runner (every run writes one): a 100,000-step in-memory
//           run with `journal: false` and with its journal (on this filesystem), alternating.
//   live    the live stream's cost on the runner: the same run (journalled by the runner) alone,
//           followed through `cairn ui`'s live stream by a plain reader (the server's cost), and
//           followed by a Chromium page on the same machine (server and browser), alternating,
//           ROUNDS times each. Target: within 5 %. The runner's CPU time (process.cpuUsage) is
//           the measure: on a loaded machine its wall time is mostly other processes' (shown too).
// Needs the built CLI (`npx nx run-many -t build`) and Chromium.
//   node tools/bench/ui.bench.mjs [--steps 30000] [--live-steps 100000] [--rounds 3] [--render-only]
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
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

/** Runs the child; resolves with the run's `{ ms, cpuMs }`. */
function runChild(prefix, n, tag, extra = []) {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, [CHILD, prefix, String(n), tag, ...extra], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    c.stdout.on('data', (d) => (out += d));
    c.on('close', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').at(-1))) : reject(new Error(`child exited ${code}`))));
  });
}
/** CPU milliseconds a live process has used (user + system, from /proc). */
const cpuOf = (pid) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
};

/** Starts `cairn ui` on a free port. */
async function startUi(prefix) {
  mkdirSync(prefix, { recursive: true });
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
  // 2. The journal's cost, then the runner alone, followed by a live-stream reader (the server's
  //    cost), and followed by a Chromium page on this same machine (server and browser: a viewer
  //    usually runs elsewhere). Each kind once per round, alternating.
  {
    const none = [];
    const alone = [];
    const stream = [];
    const page = [];
    const serverCpu = { stream: [], page: [] };
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
      none.push(await runChild(join(tmp, `none-${r}`), LIVE, `none-${r}`, ['--no-journal']));
      alone.push(await runChild(join(tmp, `alone-${r}`), LIVE, `alone-${r}`));
      {
        const prefix = join(tmp, `stream-${r}`);
        const { child, url } = await startUi(prefix);
        const c0 = cpuOf(child.pid);
        const running = runChild(prefix, LIVE, `stream-${r}`);
        const ac = new AbortController();
        const reading = runIdOf(prefix).then(async (id) => {
          const res = await fetch(`${url}api/stream?run=${id}`, { signal: ac.signal });
          for await (const _ of res.body) void _;
        }).catch(() => {});
        stream.push(await running);
        serverCpu.stream.push(cpuOf(child.pid) - c0);
        ac.abort();
        await reading;
        await stop(child);
      }
      {
        const prefix = join(tmp, `page-${r}`);
        const { child, url } = await startUi(prefix);
        const p = await browser.newPage({ viewport: { width: 1400, height: 900 } });
        await p.goto(url);
        const c0 = cpuOf(child.pid);
        const running = runChild(prefix, LIVE, `page-${r}`);
        // Follow the run as a user would: open it as soon as it is listed.
        const row = p.locator('tr[data-run] a').first();
        await row.waitFor({ timeout: 60_000 }).then(() => row.click()).catch(() => {});
        page.push(await running);
        serverCpu.page.push(cpuOf(child.pid) - c0);
        await p.close();
        await stop(child);
      }
    }
    const med = (xs, k) => median(xs.map((x) => x[k]));
    const list = (xs, k) => xs.map((x) => x[k].toFixed(0)).join(', ');
    const row = (label, xs, base) => {
      const [cpu, ms] = [med(xs, 'cpuMs'), med(xs, 'ms')];
      const vs = base === undefined ? '' : ` ${((cpu / med(base, 'cpuMs') - 1) * 100).toFixed(1).padStart(6)} %`;
      console.log(`        ${label.padEnd(36)} CPU ${cpu.toFixed(0).padStart(6)} ms${vs.padEnd(9)} [${list(xs, 'cpuMs')}]   wall ${ms.toFixed(0)} ms [${list(xs, 'ms')}]`);
    };
    console.log(`journal ${LIVE} in-memory steps, the runner's CPU time (medians of ${ROUNDS}):`);
    row('journal: false', none);
    row('with its journal', alone, none);
    console.log(`live    the same run, journalled (target: within 5 %):`);
    row('alone', alone);
    row('followed by a live-stream reader', stream, alone);
    row('followed by a Chromium page, here', page, alone);
    console.log(`        the server's CPU while it followed: reader ${median(serverCpu.stream).toFixed(0)} ms [${serverCpu.stream.map((x) => x.toFixed(0)).join(', ')}], page ${median(serverCpu.page).toFixed(0)} ms [${serverCpu.page.map((x) => x.toFixed(0)).join(', ')}]`);
  }
  console.log(load());
} finally {
  await browser.close();
  rmSync(tmp, { recursive: true, force: true });
}
