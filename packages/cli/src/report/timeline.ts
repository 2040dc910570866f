/**
 * The report's timeline, drawn in the page on a canvas so thousands of attempts stay fast: one
 * lane per executor and host, concurrent attempts stacked, a tooltip per bar (attempt, state,
 * duration, CPU time, peak memory, exit code, error).
 */

/** The page script; reads `DATA` (`start`, `end`, `steps`, `colors`); does nothing when the page has no timeline. */
export const TIMELINE_SCRIPT = `
(() => {
if (!document.getElementById('timeline')) return;
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
function bytes(n) {
  const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB']; let i = 0;
  while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return (i === 0 || n >= 10 ? Math.round(n) : n.toFixed(1)) + ' ' + u[i];
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
  const a = b.a;
  const facts = [fmt(a.end - a.start) + ' wall'];
  if (a.cpuMs !== undefined) facts.push(fmt(Math.round(a.cpuMs)) + ' cpu');
  if (a.peakMemoryBytes !== undefined) facts.push(bytes(a.peakMemoryBytes) + (a.memoryKind === 'heap' ? ' heap' : ' peak rss'));
  if (a.signal) facts.push('killed by ' + a.signal); else if (a.exitCode !== undefined && a.exitCode !== null) facts.push('exit ' + a.exitCode);
  if (a.jobId) facts.push('job ' + a.jobId);
  tip.textContent = b.step.name + ' (attempt ' + a.attempt + ', ' + a.state + '): ' + facts.join(', ') + (a.error ? ' — ' + a.error : '');
  tip.style.left = (e.clientX + 12) + 'px'; tip.style.top = (e.clientY + 12) + 'px'; tip.style.display = 'block';
});
canvas.addEventListener('mouseleave', () => { tip.style.display = 'none'; });
window.addEventListener('resize', draw);
draw();
})();
`;
