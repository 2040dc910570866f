/**
 * The run report: one self-contained HTML page (inline CSS, JS and data). A Gantt timeline
 * of every attempt, one lane per executor and host (concurrent attempts stacked), drawn on a
 * canvas so thousands of steps stay fast; then failures with their log tails, retries, the
 * slowest steps and the cache hits.
 */
import { escapeHtml, htmlPage } from '../html.js';
import { formatDuration } from '../table.js';
import type { ReportData, ReportStep } from './model.js';

/** Bar colour of each attempt end state (and outcome). */
export const ATTEMPT_COLORS: Readonly<Record<string, string>> = {
  succeeded: '#3fa34d',
  failed: '#d93f3f',
  cancelled: '#e3a21a',
  timeout: '#b8481f',
  'lease-lost': '#8e44ad',
  lost: '#6d4c41',
  running: '#2f6fde',
};

const CSS = `
* { box-sizing: border-box; }
body { margin: 0; font: 13px/1.45 system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: #1d2430; background: #ffffff; }
header { padding: 12px 16px; border-bottom: 1px solid #e3e6ea; background: #f7f8fa; }
h1 { font-size: 16px; margin: 0 0 4px; }
h2 { font-size: 14px; margin: 18px 16px 6px; }
.stats { display: flex; gap: 18px; flex-wrap: wrap; color: #5b6472; }
.stats b { color: #1d2430; }
.ok { color: #2c7a38; } .bad { color: #c0392b; } .warn { color: #b7791f; }
#timeline-wrap { position: relative; margin: 0 16px; border: 1px solid #e3e6ea; border-radius: 6px; overflow: auto; max-height: 70vh; }
#timeline { display: block; }
#tip { position: fixed; pointer-events: none; background: #1d2430; color: #fff; padding: 4px 8px; border-radius: 4px; font-size: 12px; display: none; z-index: 3; max-width: 420px; }
table { border-collapse: collapse; margin: 0 16px; min-width: 50%; }
th, td { text-align: left; padding: 3px 10px 3px 0; border-bottom: 1px solid #eef0f3; vertical-align: top; }
th { color: #5b6472; font-weight: 600; }
pre { background: #f7f8fa; border: 1px solid #e3e6ea; border-radius: 4px; padding: 6px 8px; margin: 4px 0 8px; max-height: 240px; overflow: auto; font-size: 12px; white-space: pre-wrap; }
details { margin: 0 16px; }
.legend { display: flex; gap: 12px; margin: 6px 16px; color: #5b6472; }
.legend i { width: 12px; height: 12px; border-radius: 3px; display: inline-block; vertical-align: -2px; margin-right: 4px; }
.empty { color: #5b6472; margin: 0 16px; }
`;

const SCRIPT = `
const COLORS = DATA.colors;
const ROW_H = 16, BAR_H = 12, LABEL_W = 190, AXIS_H = 22, LANE_GAP = 8;
const canvas = document.getElementById('timeline');
const tip = document.getElementById('tip');
const ctx = canvas.getContext('2d');
const t0 = DATA.start, t1 = Math.max(DATA.end, DATA.start + 1);

// Lanes: executor @ host; attempts packed greedily into rows so overlapping ones stack.
const lanes = new Map();
DATA.steps.forEach((s) => s.attempts.forEach((a) => {
  const key = a.executor + ' @ ' + a.host;
  if (!lanes.has(key)) lanes.set(key, []);
  lanes.get(key).push({ step: s, a });
}));
const laneList = [...lanes.entries()].sort((p, q) => p[0].localeCompare(q[0]));
const bars = [];
let y = AXIS_H;
const laneTops = [];
for (const [key, items] of laneList) {
  items.sort((p, q) => p.a.start - q.a.start || p.a.end - q.a.end);
  const rowEnds = [];
  for (const it of items) {
    let r = rowEnds.findIndex((e) => e <= it.a.start);
    if (r < 0) { r = rowEnds.length; rowEnds.push(0); }
    rowEnds[r] = it.a.end;
    bars.push({ ...it, row: y + r * ROW_H });
  }
  laneTops.push({ key, top: y, rows: rowEnds.length });
  y += rowEnds.length * ROW_H + LANE_GAP;
}
const height = Math.max(y, AXIS_H + 40);

function draw() {
  const width = Math.max(600, canvas.parentElement.clientWidth - 2);
  const dpr = window.devicePixelRatio || 1;
  canvas.width = width * dpr; canvas.height = height * dpr;
  canvas.style.width = width + 'px'; canvas.style.height = height + 'px';
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.fillStyle = '#ffffff'; ctx.fillRect(0, 0, width, height);
  const span = t1 - t0, plotW = width - LABEL_W - 10;
  const X = (t) => LABEL_W + ((t - t0) / span) * plotW;
  // Axis: about eight ticks at round durations.
  const steps = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 15000, 30000, 60000, 120000, 300000, 600000, 900000, 1800000, 3600000, 7200000];
  const tick = steps.find((s) => span / s <= 8) || 14400000;
  ctx.font = '11px system-ui, Helvetica, Arial, sans-serif'; ctx.textBaseline = 'middle';
  for (let t = 0; t <= span; t += tick) {
    const x = X(t0 + t);
    ctx.fillStyle = '#eef0f3'; ctx.fillRect(x, AXIS_H - 4, 1, height);
    ctx.fillStyle = '#5b6472'; ctx.fillText(fmt(t), x + 3, AXIS_H / 2);
  }
  laneTops.forEach((l, i) => {
    if (i % 2 === 1) { ctx.fillStyle = 'rgba(0,0,0,0.025)'; ctx.fillRect(0, l.top - LANE_GAP / 2, width, l.rows * ROW_H + LANE_GAP); }
    ctx.fillStyle = '#1d2430'; ctx.fillText(l.key.length > 28 ? l.key.slice(0, 27) + '…' : l.key, 6, l.top + ROW_H / 2);
  });
  for (const b of bars) {
    const x = X(b.a.start), w = Math.max(2, X(b.a.end) - x);
    ctx.fillStyle = COLORS[b.a.state] || '#9aa0a6';
    ctx.fillRect(x, b.row + (ROW_H - BAR_H) / 2, w, BAR_H);
    if (w > 60) { ctx.fillStyle = '#fff'; ctx.fillText(b.step.name, x + 3, b.row + ROW_H / 2, w - 6); }
  }
  canvas._X = X;
}
function fmt(ms) {
  if (ms < 1000) return ms + 'ms';
  const s = ms / 1000; if (s < 60) return (Math.round(s * 10) / 10) + 's';
  const m = Math.floor(s / 60); if (m < 60) return m + 'm' + String(Math.floor(s % 60)).padStart(2, '0') + 's';
  return Math.floor(m / 60) + 'h' + String(m % 60).padStart(2, '0') + 'm';
}
canvas.addEventListener('mousemove', (e) => {
  const r = canvas.getBoundingClientRect();
  const px = e.clientX - r.left, py = e.clientY - r.top;
  const X = canvas._X;
  const b = bars.find((b) => py >= b.row && py < b.row + ROW_H && px >= X(b.a.start) - 1 && px <= Math.max(X(b.a.end), X(b.a.start) + 2) + 1);
  if (!b) { tip.style.display = 'none'; return; }
  tip.textContent = b.step.name + ' (attempt ' + b.a.attempt + ', ' + b.a.state + ') ' + fmt(b.a.end - b.a.start) + (b.a.jobId ? ' job ' + b.a.jobId : '') + (b.a.error ? ' — ' + b.a.error : '');
  tip.style.left = (e.clientX + 12) + 'px'; tip.style.top = (e.clientY + 12) + 'px'; tip.style.display = 'block';
});
canvas.addEventListener('mouseleave', () => { tip.style.display = 'none'; });
window.addEventListener('resize', draw);
draw();
`;

function durationOf(s: ReportStep): number {
  const a = s.attempts;
  if (a.length === 0) return 0;
  return Math.max(...a.map((x) => x.end)) - Math.min(...a.map((x) => x.start));
}

function countBy(steps: readonly ReportStep[]): Record<string, number> {
  const c: Record<string, number> = {};
  for (const s of steps) c[s.outcome] = (c[s.outcome] ?? 0) + 1;
  return c;
}

/** Renders the self-contained report page. */
export function renderReportHtml(data: ReportData): string {
  const counts = countBy(data.steps);
  const retried = data.steps.filter((s) => s.attempts.length > 1);
  const failures = data.steps.filter((s) => s.outcome === 'failed');
  const cached = data.steps.filter((s) => s.outcome === 'cached' || s.outcome === 'skipped');
  const ran = data.steps.filter((s) => s.attempts.length > 0);
  const slowest = [...ran].sort((a, b) => durationOf(b) - durationOf(a)).slice(0, 20);
  const e = escapeHtml;
  const stat = (label: string, n: number | string, cls = '') => `<span>${e(label)} <b class="${cls}">${e(String(n))}</b></span>`;
  const failureHtml =
    failures.length === 0
      ? '<p class="empty">No failures.</p>'
      : failures
          .map((s) => {
            const last = s.attempts[s.attempts.length - 1];
            const where = last ? ` on ${e(last.executor)} @ ${e(last.host)}${last.jobId ? ` (job ${e(last.jobId)})` : ''}` : '';
            const tail = s.logTail && s.logTail.length > 0 ? `<pre>${e(s.logTail.join('\n'))}</pre>` : '<p class="empty">No log output.</p>';
            return `<details open><summary><b>${e(s.name)}</b> <code>${e(s.key)}</code>${where}: ${e(s.error ?? 'failed')}</summary>${tail}</details>`;
          })
          .join('\n');
  const retryRows = retried
    .map((s) => `<tr><td>${e(s.name)}</td><td>${s.attempts.length}</td><td>${e(s.attempts.map((a) => a.state).join(' → '))}</td><td>${e(s.outcome)}</td></tr>`)
    .join('');
  const slowRows = slowest
    .map((s) => {
      const a = s.attempts[s.attempts.length - 1];
      return `<tr><td>${e(s.name)}</td><td>${e(formatDuration(durationOf(s)))}</td><td>${e(a ? `${a.executor} @ ${a.host}` : '')}</td><td>${e(s.outcome)}</td></tr>`;
    })
    .join('');
  const body = `
<header>
  <h1>cairn run ${e(data.runId)}</h1>
  <div class="stats">
    ${stat('started', new Date(data.start).toISOString().replace('T', ' ').slice(0, 19))}
    ${stat('wall time', formatDuration(data.end - data.start))}
    ${stat('steps', data.steps.length)}
    ${stat('succeeded', counts.succeeded ?? 0, 'ok')}
    ${stat('cached', cached.length)}
    ${stat('failed', counts.failed ?? 0, (counts.failed ?? 0) > 0 ? 'bad' : '')}
    ${stat('not run (dependency failed)', counts['dep-failed'] ?? 0, (counts['dep-failed'] ?? 0) > 0 ? 'bad' : '')}
    ${stat('cancelled', counts.cancelled ?? 0, (counts.cancelled ?? 0) > 0 ? 'warn' : '')}
    ${stat('retried', retried.length, retried.length > 0 ? 'warn' : '')}
    ${stat('prefix', data.prefix)}
  </div>
</header>
<h2>Timeline (${ran.length} steps ran, by executor @ host)</h2>
<div class="legend">${Object.entries(ATTEMPT_COLORS)
    .map(([k, v]) => `<span><i style="background:${v}"></i>${e(k)}</span>`)
    .join('')}</div>
<div id="timeline-wrap"><canvas id="timeline"></canvas></div>
<div id="tip"></div>
<h2>Failures (${failures.length})</h2>
${failureHtml}
<h2>Retries (${retried.length})</h2>
${retried.length === 0 ? '<p class="empty">No step needed a retry.</p>' : `<table><tr><th>step</th><th>attempts</th><th>states</th><th>outcome</th></tr>${retryRows}</table>`}
<h2>Slowest steps</h2>
${slowest.length === 0 ? '<p class="empty">No step ran in this run.</p>' : `<table><tr><th>step</th><th>duration</th><th>where</th><th>outcome</th></tr>${slowRows}</table>`}
<h2>Cache hits (${cached.length})</h2>
${cached.length === 0 ? '<p class="empty">None.</p>' : `<details><summary>${cached.length} step(s) served from the store</summary><table>${cached.map((s) => `<tr><td>${e(s.name)}</td><td><code>${e(s.key)}</code></td><td>${e(s.outcome)}</td></tr>`).join('')}</table></details>`}
`;
  const steps = data.steps.map((s) => ({ name: s.name, attempts: s.attempts }));
  return htmlPage({ title: `cairn report — ${data.runId}`, css: CSS, body, data: { start: data.start, end: data.end, steps, colors: ATTEMPT_COLORS }, script: SCRIPT });
}
