/**
 * The HTML graph: one self-contained page (inline CSS, JS and data) that draws the DAG on a
 * canvas with states as colours. The layered layout runs in the page (the same function as
 * `layeredLayout`), so collapsing by name and filtering re-lay out thousands of nodes.
 */
import { htmlPage } from '../html.js';
import { layeredLayout } from './layout.js';
import { STATE_COLORS, STATE_LABELS, STEP_STATES, type GraphModel } from './model.js';

/** Options of {@link renderGraphHtml}. */
export interface GraphHtmlOptions {
  /** Page title. @default 'cairn graph' */
  readonly title?: string;
}

const CSS = `
* { box-sizing: border-box; }
html, body { margin: 0; height: 100%; font: 13px/1.4 system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: #1d2430; background: #ffffff; }
header { position: fixed; top: 0; left: 0; right: 0; height: 44px; display: flex; gap: 12px; align-items: center; padding: 0 12px; border-bottom: 1px solid #e3e6ea; background: #f7f8fa; z-index: 2; }
header h1 { font-size: 14px; margin: 0; font-weight: 600; white-space: nowrap; }
header input[type=search] { width: 220px; padding: 4px 6px; border: 1px solid #c9ced6; border-radius: 4px; }
header label { white-space: nowrap; }
header button { padding: 3px 10px; border: 1px solid #c9ced6; border-radius: 4px; background: #fff; cursor: pointer; }
#count { color: #5b6472; white-space: nowrap; }
#legend { position: fixed; left: 12px; bottom: 12px; background: rgba(255,255,255,.92); border: 1px solid #e3e6ea; border-radius: 6px; padding: 6px 10px; z-index: 2; }
#legend div { display: flex; align-items: center; gap: 6px; }
#legend i { width: 12px; height: 12px; border-radius: 3px; display: inline-block; }
#detail { position: fixed; right: 12px; top: 56px; width: 340px; max-height: 70vh; overflow: auto; background: #fff; border: 1px solid #e3e6ea; border-radius: 6px; padding: 8px 12px; display: none; z-index: 2; word-break: break-all; }
#detail h2 { font-size: 14px; margin: 0 0 6px; }
#detail dt { color: #5b6472; }
#detail dd { margin: 0 0 4px; }
canvas { position: fixed; top: 44px; left: 0; display: block; cursor: grab; }
`;

const BODY = `
<header>
  <h1 id="title"></h1>
  <input id="filter" type="search" placeholder="filter by name (Enter zooms)" aria-label="filter by name">
  <label><input id="only" type="checkbox"> only matches</label>
  <label><input id="collapse" type="checkbox"> collapse by name</label>
  <button id="fit" type="button">fit</button>
  <span id="count"></span>
</header>
<canvas id="canvas"></canvas>
<div id="legend"></div>
<div id="detail"></div>
`;

const SCRIPT = `
const STATES = DATA.states;
const RANK = DATA.rank;
const CELL_W = 200, CELL_H = 46, BOX_W = 168, BOX_H = 32;
const canvas = document.getElementById('canvas');
const ctx = canvas.getContext('2d');
const filterEl = document.getElementById('filter');
const onlyEl = document.getElementById('only');
const collapseEl = document.getElementById('collapse');
const detailEl = document.getElementById('detail');
document.getElementById('title').textContent = DATA.title;
document.title = DATA.title;
let view = null;
let tf = { s: 1, x: 0, y: 0 };
let selected = -1;

function esc(s) { return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]); }

function build() {
  const q = filterEl.value.trim().toLowerCase();
  const match = (name) => q === '' || name.toLowerCase().includes(q);
  let nodes = DATA.nodes.map((n, i) => ({ ...n, members: [i] }));
  let edges = [];
  for (let k = 0; k < DATA.edges.length; k += 2) edges.push([DATA.edges[k], DATA.edges[k + 1]]);
  if (collapseEl.checked) {
    const groupOf = new Map();
    const groups = [];
    const map = new Int32Array(nodes.length);
    nodes.forEach((n, i) => {
      let g = groupOf.get(n.name);
      if (g === undefined) {
        g = groups.length;
        groupOf.set(n.name, g);
        groups.push({ id: n.name, name: n.name, hash: '', state: n.state, members: [] });
      }
      const G = groups[g];
      G.members.push(i);
      if (RANK[n.state] > RANK[G.state]) G.state = n.state;
      map[i] = g;
    });
    const seen = new Set();
    const ge = [];
    for (const [a, b] of edges) {
      const ga = map[a], gb = map[b];
      if (ga === gb) continue;
      const key = ga * 1048576 + gb;
      if (seen.has(key)) continue;
      seen.add(key);
      ge.push([ga, gb]);
    }
    nodes = groups;
    edges = ge;
  }
  nodes.forEach((n) => (n.match = q !== '' && match(n.name)));
  if (onlyEl.checked && q !== '') {
    const keep = new Int32Array(nodes.length).fill(-1);
    const kept = [];
    nodes.forEach((n, i) => { if (n.match) { keep[i] = kept.length; kept.push(n); } });
    edges = edges.filter(([a, b]) => keep[a] >= 0 && keep[b] >= 0).map(([a, b]) => [keep[a], keep[b]]);
    nodes = kept;
  }
  const maxRows = Math.max(8, Math.ceil(Math.sqrt(nodes.length) * 1.5));
  const lay = layeredLayout(nodes.length, edges, maxRows);
  view = { nodes, edges, lay, query: q };
  const shown = nodes.length;
  const matches = nodes.filter((n) => n.match).length;
  document.getElementById('count').textContent = DATA.nodes.length + ' steps' + (collapseEl.checked ? ', ' + shown + ' groups' : '') + (q !== '' ? ', ' + matches + ' match' : '');
  selected = -1;
  detailEl.style.display = 'none';
  fit(false);
}

function fit(toMatches) {
  const { nodes, lay } = view;
  const w = window.innerWidth, h = window.innerHeight - 44;
  let idx = nodes.map((_, i) => i);
  if (toMatches) { const m = idx.filter((i) => nodes[i].match); if (m.length > 0) idx = m; }
  let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
  for (const i of idx) { x0 = Math.min(x0, lay.x[i]); x1 = Math.max(x1, lay.x[i]); y0 = Math.min(y0, lay.y[i]); y1 = Math.max(y1, lay.y[i]); }
  if (idx.length === 0) { x0 = y0 = 0; x1 = y1 = 0; }
  const gw = (x1 - x0) * CELL_W + BOX_W + 40, gh = (y1 - y0) * CELL_H + BOX_H + 40;
  const s = Math.min(2, w / gw, h / gh);
  tf = { s, x: (w - gw * s) / 2 - (x0 * CELL_W - 20) * s, y: (h - gh * s) / 2 - (y0 * CELL_H - 20) * s };
  draw();
}

function resize() {
  const dpr = window.devicePixelRatio || 1;
  canvas.width = Math.floor(window.innerWidth * dpr);
  canvas.height = Math.floor((window.innerHeight - 44) * dpr);
  canvas.style.width = window.innerWidth + 'px';
  canvas.style.height = (window.innerHeight - 44) + 'px';
}

function draw() {
  const dpr = window.devicePixelRatio || 1;
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  ctx.setTransform(dpr * tf.s, 0, 0, dpr * tf.s, dpr * tf.x, dpr * tf.y);
  const { nodes, edges, lay, query } = view;
  const dim = query !== '';
  ctx.lineWidth = Math.max(1 / tf.s, 1);
  ctx.strokeStyle = edges.length > 2000 ? 'rgba(120,128,140,0.25)' : 'rgba(120,128,140,0.6)';
  ctx.beginPath();
  for (const [a, b] of edges) {
    const ax = lay.x[a] * CELL_W + BOX_W, ay = lay.y[a] * CELL_H + BOX_H / 2;
    const bx = lay.x[b] * CELL_W, by = lay.y[b] * CELL_H + BOX_H / 2;
    const mx = (ax + bx) / 2;
    // An edge that skips columns on one row would run under the boxes between: arc it.
    const lift = ay === by && bx - ax > CELL_W ? Math.min(CELL_H * 2, (bx - ax) / CELL_W * CELL_H * 0.5) : 0;
    ctx.moveTo(ax, ay);
    ctx.bezierCurveTo(mx, ay - lift, mx, by - lift, bx, by);
  }
  ctx.stroke();
  const labels = tf.s * BOX_W > 70;
  ctx.font = '12px system-ui, Helvetica, Arial, sans-serif';
  ctx.textBaseline = 'middle';
  nodes.forEach((n, i) => {
    const x = lay.x[i] * CELL_W, y = lay.y[i] * CELL_H;
    ctx.globalAlpha = dim && !n.match ? 0.25 : 1;
    ctx.fillStyle = STATES[n.state].color;
    ctx.beginPath();
    if (ctx.roundRect) ctx.roundRect(x, y, BOX_W, BOX_H, 6); else ctx.rect(x, y, BOX_W, BOX_H);
    ctx.fill();
    if (i === selected || (dim && n.match)) { ctx.lineWidth = 3 / Math.max(tf.s, 0.2); ctx.strokeStyle = '#111'; ctx.stroke(); }
    if (labels) {
      ctx.fillStyle = '#ffffff';
      const text = n.members.length > 1 ? n.name + ' ×' + n.members.length : n.name + ' ' + n.hash.slice(0, 6);
      ctx.fillText(text.length > 24 ? text.slice(0, 23) + '…' : text, x + 8, y + BOX_H / 2, BOX_W - 12);
    }
  });
  ctx.globalAlpha = 1;
}

function hit(px, py) {
  const gx = (px - tf.x) / tf.s, gy = (py - 44 - tf.y) / tf.s;
  const { nodes, lay } = view;
  for (let i = 0; i < nodes.length; i++) {
    const x = lay.x[i] * CELL_W, y = lay.y[i] * CELL_H;
    if (gx >= x && gx <= x + BOX_W && gy >= y && gy <= y + BOX_H) return i;
  }
  return -1;
}

function showDetail(i) {
  selected = i;
  if (i < 0) { detailEl.style.display = 'none'; draw(); return; }
  const n = view.nodes[i];
  const rows = [];
  if (n.members.length > 1) {
    const counts = {};
    for (const m of n.members) counts[DATA.nodes[m].state] = (counts[DATA.nodes[m].state] || 0) + 1;
    rows.push(['steps', n.members.length]);
    rows.push(['states', Object.entries(counts).map(([s, c]) => c + ' ' + STATES[s].label).join(', ')]);
  } else {
    const d = DATA.nodes[n.members[0]];
    rows.push(['id', d.id], ['state', STATES[d.state].label]);
    if (d.reason) rows.push(['reason', d.reason]);
    if (d.output) rows.push(['output', d.output]);
    if (d.executor) rows.push(['executor', d.executor]);
  }
  detailEl.innerHTML = '<h2>' + esc(n.name) + '</h2><dl>' + rows.map(([k, v]) => '<dt>' + esc(k) + '</dt><dd>' + esc(v) + '</dd>').join('') + '</dl>';
  detailEl.style.display = 'block';
  draw();
}

let drag = null;
canvas.addEventListener('mousedown', (e) => { drag = { x: e.clientX, y: e.clientY, tx: tf.x, ty: tf.y, moved: false }; canvas.style.cursor = 'grabbing'; });
window.addEventListener('mousemove', (e) => {
  if (!drag) return;
  const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
  if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
  tf.x = drag.tx + dx; tf.y = drag.ty + dy;
  draw();
});
window.addEventListener('mouseup', (e) => {
  if (drag && !drag.moved) showDetail(hit(e.clientX, e.clientY));
  drag = null;
  canvas.style.cursor = 'grab';
});
canvas.addEventListener('wheel', (e) => {
  e.preventDefault();
  const k = Math.exp(-e.deltaY * 0.0015);
  const px = e.clientX, py = e.clientY - 44;
  tf.x = px - (px - tf.x) * k; tf.y = py - (py - tf.y) * k; tf.s *= k;
  draw();
}, { passive: false });
let pending = 0;
filterEl.addEventListener('input', () => { clearTimeout(pending); pending = setTimeout(build, 120); });
filterEl.addEventListener('keydown', (e) => { if (e.key === 'Enter') { clearTimeout(pending); build(); fit(true); } });
onlyEl.addEventListener('change', build);
collapseEl.addEventListener('change', build);
document.getElementById('fit').addEventListener('click', () => fit(false));
window.addEventListener('resize', () => { resize(); fit(false); });

const legend = document.getElementById('legend');
const totals = {};
for (const n of DATA.nodes) totals[n.state] = (totals[n.state] || 0) + 1;
legend.innerHTML = DATA.order.filter((s) => totals[s]).map((s) => '<div><i style="background:' + STATES[s].color + '"></i>' + esc(STATES[s].label) + ' <b>' + totals[s] + '</b></div>').join('');
resize();
build();
`;

/** Renders the self-contained HTML page for a graph. */
export function renderGraphHtml(model: GraphModel, options: GraphHtmlOptions = {}): string {
  const title = options.title ?? 'cairn graph';
  const states = Object.fromEntries(STEP_STATES.map((s) => [s, { label: STATE_LABELS[s], color: STATE_COLORS[s] }]));
  // Collapsed groups show their most urgent member's state.
  const urgency = ['unknown', 'not-examined', 'cached', 'running', 'run', 'drifted', 'failed-before'];
  const data = {
    title,
    states,
    order: STEP_STATES,
    rank: Object.fromEntries(urgency.map((s, i) => [s, i])),
    nodes: model.nodes.map((n) => ({ id: n.id, name: n.name, hash: n.hash, state: n.state, reason: n.reason, output: n.output, executor: n.executor })),
    edges: model.edges.flat(),
  };
  // Transpilers that keep function names (tsx, vitest) wrap inner functions in `__name(fn, "…")`.
  const layout = `const __name = (f) => f;\n${layeredLayout.toString()}`;
  return htmlPage({ title, css: CSS, body: BODY, data, script: `${layout}\n${SCRIPT}` });
}
