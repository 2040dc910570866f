// Turns job results into `bench.json` (everything, machine-readable) and `bench.md` (tables).
import { TARGETS } from './plan.mjs';

/** `1.23 M/s`, `45.6 k/s`, `789 /s`. */
export function formatRate(perSec) {
  if (!Number.isFinite(perSec)) return '–';
  if (perSec >= 1e6) return `${(perSec / 1e6).toFixed(2)} M/s`;
  if (perSec >= 1e3) return `${(perSec / 1e3).toFixed(1)} k/s`;
  return `${perSec.toFixed(0)} /s`;
}

/** Milliseconds with sensible precision. */
export function formatMs(ms) {
  if (!Number.isFinite(ms)) return '–';
  if (ms >= 10_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms >= 100) return `${ms.toFixed(0)} ms`;
  if (ms >= 1) return `${ms.toFixed(1)} ms`;
  return `${ms.toFixed(3)} ms`;
}

function formatN(n) {
  if (n >= 1e6 && n % 1e6 === 0) return `${n / 1e6}M`;
  if (n >= 1e3 && n % 1e3 === 0) return `${n / 1e3}k`;
  return String(n);
}

const mib = (bytes) => (bytes / 2 ** 20).toFixed(0);

/** Adds `ratio` (median / the group's reference median at the same shape and n) to every result. */
export function addRatios(results) {
  const key = (r) => `${r.group}|${r.params.shape}|${r.params.n}`;
  const refs = new Map();
  for (const r of results) if (r.ref && r.median !== undefined) refs.set(key(r), r);
  for (const r of results) {
    const ref = refs.get(key(r));
    r.ratio = ref && r.median !== undefined ? r.median / ref.median : undefined;
    r.refImpl = ref ? `${ref.impl}${ref.backend === 'js' ? ' (js)' : ''}` : undefined;
  }
}

function targetRows(results) {
  return TARGETS.map((t) => {
    const r = results.find(
      (x) =>
        (t.group instanceof RegExp ? t.group.test(x.group) : x.group === t.group) &&
        x.impl === t.impl &&
        x.params.n === t.n &&
        (t.shape === undefined || x.params.shape === t.shape) &&
        x.backend === 'native',
    );
    if (!r || r.median === undefined) return { ...t, status: 'not measured' };
    const value = t.maxMs !== undefined ? `${formatMs(r.median)} (target ≤ ${formatMs(t.maxMs)})` : `${formatRate(r.rate)} (target ≥ ${formatRate(t.minRate)})`;
    const met = t.maxMs !== undefined ? r.median <= t.maxMs : r.rate >= t.minRate;
    return { ...t, value, status: met ? 'met' : 'missed', where: r.group };
  });
}

/** Derived lines: the runner's cold rate as a fraction of the store floor, etc. */
function derived(results) {
  const lines = [];
  for (const r of results) {
    if (r.variant !== 'cold-disk' || !r.group.startsWith('cold run vs store floor') || r.rate === undefined) continue;
    const floor = results.find((x) => x.group === r.group && x.variant === 'sync' && x.params.n === r.params.n);
    const floorAsync = results.find((x) => x.group === r.group && x.variant === 'async' && x.params.n === r.params.n);
    if (floor?.rate) {
      const pct = (100 * r.rate) / floor.rate;
      const pctAsync = floorAsync?.rate ? `, ${((100 * r.rate) / floorAsync.rate).toFixed(0)} % of the async floor (${formatRate(floorAsync.rate)})` : '';
      lines.push(`- ${r.group}, ${formatN(r.params.n)} steps: the runner's cold rate ${formatRate(r.rate)} is **${pct.toFixed(0)} %** of the sync floor (${formatRate(floor.rate)})${pctAsync}.`);
    }
    const paired = results.find((x) => x.group === r.group && x.variant === 'cold-paired' && x.params.n === r.params.n);
    const m = paired?.metrics;
    if (m?.pairedRatio !== undefined) {
      lines.push(`  Paired with the floor in the same repetitions: the runner takes **×${m.pairedRatio.toFixed(2)}** the floor's time (median of per-pair ratios; floor ${formatMs(m.pairedFloorMs)}, runner ${formatMs(paired.median)}).`);
    }
  }
  return lines;
}

/** The Markdown report. */
export function toMarkdown(doc) {
  const { machine, results } = doc;
  const out = [];
  out.push(`# Cairn benchmarks (${doc.mode} mode)`);
  out.push('');
  out.push(
    `${machine.cpus} × ${machine.cpuModel}, ${machine.memGiB} GiB RAM, Node ${machine.node}, ${machine.platform}; ` +
      `Cairn backend: ${doc.backend.native ? 'native (Rust N-API)' : `TS fallback only (${doc.backend.reason})`}. ` +
      `Load average at start ${doc.loadavgStart.map((x) => x.toFixed(2)).join(' / ')}, at end ${doc.loadavgEnd.map((x) => x.toFixed(2)).join(' / ')} (1/5/15 min). ` +
      `Started ${doc.startedAt}, took ${(doc.durationMs / 1000).toFixed(0)} s.`,
  );
  out.push('');
  out.push(
    `Each row is one fresh child process: ${doc.warmup} warm-up repetition(s), then the median of the repetitions shown (min–max spread beside it). ` +
      '"× ref" is the median time divided by the group\'s reference row (marked ◆) at the same shape and size: above 1 is slower. ' +
      'Peak RSS is the child\'s `maxRSS` (it includes the case input: graph, handles, specs); B/step is (peak RSS − RSS after imports) / n. Rate is n / median.',
  );
  out.push('');
  const targets = targetRows(results);
  out.push('## Targets (issue #5)');
  out.push('');
  out.push('| target | measured | status |');
  out.push('|---|---|---|');
  for (const t of targets) out.push(`| ${t.label} | ${t.value ?? '–'}${t.where ? ` — ${t.where}` : ''} | ${t.status} |`);
  const d = derived(results);
  if (d.length) {
    out.push('');
    out.push(...d);
  }
  out.push('');
  out.push('## Results');
  out.push('');
  out.push('| group | implementation | shape | n | median | min–max | runs | rate | × ref | peak RSS MiB | B/step | load | note |');
  out.push('|---|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---|');
  for (const r of results) {
    const impl = `${r.ref ? '◆ ' : ''}${r.impl}`;
    const spread = r.samples?.length ? `${formatMs(r.min)}–${formatMs(r.max)}` : '–';
    const note = [r.note, r.skipped, r.error ? `failed: ${r.error}` : undefined, r.metricsNote].filter(Boolean).join('; ');
    out.push(
      `| ${r.group} | ${impl} | ${r.params.shape} | ${formatN(r.params.n)} | ${r.median !== undefined ? formatMs(r.median) : '–'} | ${spread} | ${r.samples?.length ?? 0} | ${r.rate !== undefined ? formatRate(r.rate) : '–'} | ${r.ratio !== undefined ? r.ratio.toFixed(2) : '–'} | ${r.maxRssBytes ? mib(r.maxRssBytes) : '–'} | ${r.bytesPerStep !== undefined ? Math.round(r.bytesPerStep).toLocaleString('en-US') : '–'} | ${r.loadavg1 !== undefined ? r.loadavg1.toFixed(1) : '–'} | ${note.replaceAll('|', '\\|')} |`,
    );
  }
  out.push('');
  return `${out.join('\n')}\n`;
}
