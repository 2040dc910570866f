// Runs one benchmark job in this (fresh) process and prints one `BENCH_RESULT {json}` line.
//
//   node tools/bench/lib/child.mjs <case> <variant> '<params json>'
//
// A case module (tools/bench/cases/<case>.mjs) exports `variants`: name → async (params) =>
// `once`, where `once()` does its own untimed setup, times only the measured work and returns
// the milliseconds (or `{ ms, ...metrics }`). `once.cleanup()` runs after the last repetition.
// Peak RSS is `process.resourceUsage().maxRSS` at the end; `baseRss` is the RSS after the case
// module was imported and before any graph was built.
import { performance } from 'node:perf_hooks';

const [caseName, variant, paramsJson = '{}'] = process.argv.slice(2);
const params = JSON.parse(paramsJson);
const mod = await import(new URL(`../cases/${caseName}.mjs`, import.meta.url).href);
const make = mod.variants?.[variant];
if (typeof make !== 'function') {
  console.error(`unknown variant "${variant}" of case "${caseName}"; known: ${Object.keys(mod.variants ?? {}).join(', ')}`);
  process.exit(2);
}
const gc = globalThis.gc ?? (() => undefined);
const baseRss = process.memoryUsage().rss;
const t0 = performance.now();
const once = await make(params);
const setupMs = performance.now() - t0;
const samples = [];
let metrics = {};
const warmup = params.warmup ?? 1;
const runs = params.runs ?? 3;
for (let k = 0; k < warmup + runs; k++) {
  gc();
  const r = await once();
  const ms = typeof r === 'number' ? r : r.ms;
  if (k >= warmup) {
    samples.push(ms);
    if (typeof r === 'object') metrics = { ...metrics, ...r, ms: undefined };
  }
}
if (typeof once.cleanup === 'function') await once.cleanup();
let backend = null;
if (params.cairn) {
  const core = await import('@cairn/core');
  backend = { kind: core.backend, reason: core.backendReason };
}
const out = {
  case: caseName,
  variant,
  samples,
  setupMs,
  metrics,
  backend,
  baseRssBytes: baseRss,
  maxRssBytes: process.resourceUsage().maxRSS * 1024,
};
process.stdout.write(`BENCH_RESULT ${JSON.stringify(out)}\n`);
