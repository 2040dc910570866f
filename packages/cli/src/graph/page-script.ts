/**
 * The graph page's script (runs in the browser, after `clusterModel` and `layeredLayout`):
 * builds the first view (clusters for big graphs), lays it out, draws boxes, edges through their
 * layout points and arrowheads on a canvas fitted to the window, and expands a cluster on a
 * click. `window.cairnGraph` exposes what is drawn, for tests.
 */
export const GRAPH_SCRIPT = `
const STATES = DATA.states, ORDER = DATA.order, RANK = DATA.rank;
const N = DATA.names.length;
const BOX_W = 190, BOX_H = 34, PAD = 28, DUMMY = 0.34, MAX_SCALE = 1.6;
const GAP_X = [48, 240], ROW_H = [BOX_H + 14, 120];
const FIRST_VIEW = 48, MIN_FIRST_SCALE = 0.8, LEGEND_H = 30;
const EDGE = '#7b8290';
const canvas = document.getElementById('canvas');
const ctx = canvas.getContext('2d');
const filterEl = document.getElementById('filter');
const detailEl = document.getElementById('detail');
document.getElementById('title').textContent = DATA.title;
document.title = DATA.title;

function esc(s) { return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]); }
const stateOf = (i) => ORDER[DATA.state[i]];

// Layers of the step graph (longest path), for clustering by layer.
const stepLayer = new Int32Array(N);
{
  const indeg = new Int32Array(N), succ = Array.from({ length: N }, () => []);
  for (let k = 0; k < DATA.edges.length; k += 2) { succ[DATA.edges[k]].push(DATA.edges[k + 1]); indeg[DATA.edges[k + 1]]++; }
  const q = []; for (let i = 0; i < N; i++) if (indeg[i] === 0) q.push(i);
  for (let h = 0; h < q.length; h++) for (const w of succ[q[h]]) { stepLayer[w] = Math.max(stepLayer[w], stepLayer[q[h]] + 1); if (--indeg[w] === 0) q.push(w); }
}
const model = clusterModel(DATA.names, stepLayer, { maxChildren: 24, small: 12 });
let g = null; // geometry of the current view
let tf = { s: 1, x: 0, y: 0 };
let selected = -1;
let lastMs = 0;

function facts(u) {
  if (u.kind === 'step') { const s = stateOf(u.step); return { label: DATA.names[u.step] + ' ' + DATA.hashes[u.step].slice(0, 6), state: s, counts: { [s]: 1 }, size: 1 }; }
  const counts = {};
  let state = 'unknown', best = -1;
  for (const i of u.steps) { const s = stateOf(i); counts[s] = (counts[s] || 0) + 1; if (RANK[s] > best) { best = RANK[s]; state = s; } }
  return { label: u.label + ' ×' + u.steps.length, state, counts, size: u.steps.length };
}

/** Layout and drawing geometry of a view: edges between its boxes (counted), layers, rows, paths. */
function geometryOf(units) {
  const unitOf = new Int32Array(N);
  units.forEach((u, k) => { if (u.kind === 'step') unitOf[u.step] = k; else for (const i of u.steps) unitOf[i] = k; });
  const agg = new Map(), M = units.length;
  for (let k = 0; k < DATA.edges.length; k += 2) {
    const a = unitOf[DATA.edges[k]], b = unitOf[DATA.edges[k + 1]];
    if (a !== b) agg.set(a * M + b, (agg.get(a * M + b) || 0) + 1);
  }
  const edges = [...agg].map(([key, c]) => [Math.floor(key / M), key % M, c]);
  const lay = layeredLayout(M, edges.map((e) => [e[0], e[1]]), DUMMY);
  const geom = { units: units.map(facts), edges, lay };
  space(geom);
  return geom;
}

/** The scale that fits a geometry to the window. */
function fitScale(geom) {
  return Math.min(MAX_SCALE, window.innerWidth / geom.width, viewHeight() / geom.height);
}

/** Height the drawing is fitted into: the window below the header, above the legend. */
function viewHeight() {
  return window.innerHeight - 44 - LEGEND_H;
}

function rebuild() {
  const t0 = performance.now();
  g = geometryOf(view);
  fit();
  lastMs = performance.now() - t0;
  const M = view.length;
  const q = filterEl.value.trim().toLowerCase();
  document.getElementById('count').textContent = N + ' steps' + (M < N ? ' · ' + M + ' boxes (click a ×N box to expand it)' : '') + (q ? ' · ' + g.units.filter((_, k) => matches(k, q)).length + ' match' : '');
}

// Spacing chosen so the drawing's shape is the window's: wider gaps for tall graphs, taller rows for wide ones.
function space(g) {
  const w = window.innerWidth, h = viewHeight();
  const L = g.lay.layers, H = Math.max(g.lay.height, 1);
  let gapX = GAP_X[0], rowH = ROW_H[0];
  const W = () => L * BOX_W + (L - 1) * gapX + 2 * PAD, Ht = () => H * rowH + 2 * PAD;
  const t = w / h;
  if (W() / Ht() < t && L > 1) gapX = Math.min(GAP_X[1], Math.max(GAP_X[0], (t * Ht() - 2 * PAD - L * BOX_W) / (L - 1)));
  if (W() / Ht() > t) rowH = Math.min(ROW_H[1], Math.max(ROW_H[0], (W() / t - 2 * PAD) / H));
  g.gapX = gapX; g.rowH = rowH; g.width = W(); g.height = Ht();
  const colX = (l) => PAD + l * (BOX_W + gapX);
  g.boxes = g.units.map((_, k) => ({ x: colX(g.lay.layer[k]), y: PAD + g.lay.y[k] * rowH - BOX_H / 2, w: BOX_W, h: BOX_H }));
  // Edge paths: out of the source's right side, through each dummy (across its column at its row), into the target's left side.
  // Several edges at one side get ports spread along it, in the order of where they come from.
  const ports = (list) => { list.sort((p, q) => p.y - q.y); list.forEach((p, i) => (p.off = list.length === 1 ? 0 : (i / (list.length - 1) - 0.5) * BOX_H * 0.6)); };
  const ins = g.units.map(() => []), outs = g.units.map(() => []);
  g.paths = g.edges.map((e, k) => {
    const r = g.lay.routes[k];
    const pts = [];
    for (let i = 0; i < r.length; i += 2) pts.push([r[i], PAD + r[i + 1] * rowH]);
    // A reversed edge (a cycle between clusters) is laid out target to source: it runs from its target's right side.
    const rev = g.lay.reversed[k];
    const [from, to] = rev ? [e[1], e[0]] : [e[0], e[1]];
    const p = { pts, from, to, rev, count: e[2] };
    outs[from].push({ p, y: pts.length > 1 ? pts[1][1] : 0 });
    ins[to].push({ p, y: pts.length > 1 ? pts[pts.length - 2][1] : 0 });
    return p;
  });
  ins.forEach((l) => { ports(l); for (const x of l) x.p.inOff = x.off; });
  outs.forEach((l) => { ports(l); for (const x of l) x.p.outOff = x.off; });
  for (const p of g.paths) {
    const segs = [];
    const a = g.boxes[p.from], b = g.boxes[p.to];
    segs.push([a.x + BOX_W, a.y + BOX_H / 2 + (p.outOff || 0)]);
    for (let i = 1; i < p.pts.length - 1; i++) { const x = colX(p.pts[i][0]); segs.push([x, p.pts[i][1]], [x + BOX_W, p.pts[i][1]]); }
    segs.push([b.x, b.y + BOX_H / 2 + (p.inOff || 0)]);
    p.segs = segs;
  }
}

function fit(toMatches) {
  const w = window.innerWidth, h = viewHeight();
  let x0 = 0, y0 = 0, x1 = g.width, y1 = g.height;
  const q = filterEl.value.trim().toLowerCase();
  if (toMatches && q) {
    const idx = g.units.map((_, k) => k).filter((k) => matches(k, q));
    if (idx.length > 0) {
      x0 = Math.min(...idx.map((k) => g.boxes[k].x)) - PAD; y0 = Math.min(...idx.map((k) => g.boxes[k].y)) - PAD;
      x1 = Math.max(...idx.map((k) => g.boxes[k].x + BOX_W)) + PAD; y1 = Math.max(...idx.map((k) => g.boxes[k].y + BOX_H)) + PAD;
    }
  }
  const s = Math.min(MAX_SCALE, w / (x1 - x0), h / (y1 - y0));
  tf = { s, x: (w - (x1 - x0) * s) / 2 - x0 * s, y: (h - (y1 - y0) * s) / 2 - y0 * s };
  draw();
}

function resize() {
  const dpr = window.devicePixelRatio || 1;
  canvas.width = Math.floor(window.innerWidth * dpr);
  canvas.height = Math.floor((window.innerHeight - 44) * dpr);
  canvas.style.width = window.innerWidth + 'px';
  canvas.style.height = (window.innerHeight - 44) + 'px';
}

function matches(k, q) {
  const u = view[k];
  if (u.kind === 'step') return DATA.names[u.step].toLowerCase().includes(q);
  return u.label.toLowerCase().includes(q) || u.steps.some((i) => DATA.names[i].toLowerCase().includes(q));
}

function draw() {
  const dpr = window.devicePixelRatio || 1;
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  ctx.setTransform(dpr * tf.s, 0, 0, dpr * tf.s, dpr * tf.x, dpr * tf.y);
  const q = filterEl.value.trim().toLowerCase();
  const px = 1 / tf.s; // one screen pixel in drawing units
  // Edges: smooth between columns, straight across a column (through a dummy's gap).
  ctx.strokeStyle = EDGE; ctx.fillStyle = EDGE;
  for (const p of g.paths) {
    ctx.lineWidth = Math.max(px, Math.min(4, 1 + Math.log2(p.count)) * Math.max(px, 0.9));
    ctx.beginPath();
    const s = p.segs;
    ctx.moveTo(s[0][0], s[0][1]);
    for (let i = 1; i < s.length; i++) {
      const [ax, ay] = s[i - 1], [bx, by] = s[i];
      if (ay === by && i % 2 === 0 && i < s.length - 1) ctx.lineTo(bx, by);
      else { const mx = (ax + bx) / 2; ctx.bezierCurveTo(mx, ay, mx, by, bx, by); }
    }
    ctx.stroke();
    // Arrowhead at the dependent: pointing right into its left side (left into its right side for a reversed edge).
    const [tx, ty] = p.rev ? s[0] : s[s.length - 1];
    const d = p.rev ? -1 : 1, L = Math.max(9, 7 * px), W = Math.max(5, 4 * px);
    ctx.beginPath(); ctx.moveTo(tx, ty); ctx.lineTo(tx - d * L, ty - W); ctx.lineTo(tx - d * L, ty + W); ctx.closePath(); ctx.fill();
  }
  const labels = BOX_H * tf.s >= 11;
  ctx.font = '13px system-ui, Helvetica, Arial, sans-serif';
  ctx.textBaseline = 'middle';
  g.units.forEach((u, k) => {
    const b = g.boxes[k];
    const hit = q !== '' && matches(k, q);
    ctx.globalAlpha = q !== '' && !hit ? 0.3 : 1;
    ctx.fillStyle = STATES[u.state].color;
    ctx.beginPath();
    if (ctx.roundRect) ctx.roundRect(b.x, b.y, b.w, b.h, 6); else ctx.rect(b.x, b.y, b.w, b.h);
    ctx.fill();
    if (view[k].kind === 'group') {
      // A cluster: a double border and a bar of its members' states along the bottom.
      ctx.lineWidth = 2 * px; ctx.strokeStyle = 'rgba(20,24,32,0.55)'; ctx.stroke();
      let x = b.x + 5;
      const wBar = b.w - 10;
      for (const s of ORDER) { const n = u.counts[s] || 0; if (!n) continue; const w = (wBar * n) / u.size; ctx.fillStyle = STATES[s].color; ctx.fillRect(x, b.y + b.h - 7, w, 4); x += w; }
    }
    if (k === selected || hit) { ctx.lineWidth = 3 * px; ctx.strokeStyle = '#111'; ctx.stroke(); }
    if (labels) {
      ctx.fillStyle = '#ffffff';
      const t = u.label;
      ctx.fillText(t.length > 30 ? t.slice(0, 29) + '…' : t, b.x + 8, b.y + (view[k].kind === 'group' ? b.h / 2 - 3 : b.h / 2), b.w - 14);
    }
  });
  ctx.globalAlpha = 1;
}

function hit(cx, cy) {
  const gx = (cx - tf.x) / tf.s, gy = (cy - 44 - tf.y) / tf.s;
  for (let k = 0; k < g.boxes.length; k++) { const b = g.boxes[k]; if (gx >= b.x && gx <= b.x + b.w && gy >= b.y && gy <= b.y + b.h) return k; }
  return -1;
}

function expand(k) {
  const u = view[k];
  if (!u || u.kind !== 'group') return false;
  view = [...view.slice(0, k), ...model.expand(u), ...view.slice(k + 1)];
  selected = -1;
  rebuild();
  showDetail(-1, 'Expanded ' + u.label + ' (' + u.steps.length + ' steps) into ' + model.expand(u).length + ' parts.', u);
  return true;
}

function collapse(group) {
  // Every box that came out of the group goes back into it.
  const inside = (u) => { for (let p = u.parent; p; p = p.parent) if (p === group) return true; return false; };
  const first = view.findIndex(inside);
  if (first < 0) return;
  view = [...view.slice(0, first).filter((u) => !inside(u)), group, ...view.slice(first).filter((u) => !inside(u))];
  selected = -1;
  rebuild();
  showDetail(-1);
}

function showDetail(k, note, collapsible) {
  selected = k;
  if (k < 0 && !note) { detailEl.style.display = 'none'; draw(); return; }
  const rows = [];
  let title = '';
  let parent = collapsible || null;
  if (k >= 0) {
    const u = view[k];
    parent = u.parent && u.parent.parent ? u.parent : null;
    const i = u.step;
    title = DATA.names[i];
    rows.push(['id', DATA.names[i] + '-' + DATA.hashes[i]], ['state', STATES[stateOf(i)].label]);
    const reason = DATA.reasons[DATA.reason[i]]; if (reason) rows.push(['reason', reason]);
    if (DATA.outputs[i]) rows.push(['output', DATA.outputs[i]]);
    const ex = DATA.executors[DATA.executor[i]]; if (ex) rows.push(['executor', ex]);
    rows.push(['layer', stepLayer[i]]);
  } else title = note;
  const btn = parent ? '<button id="collapse-btn" type="button">collapse ' + esc(parent.label) + '</button>' : '';
  detailEl.innerHTML = '<h2>' + esc(title) + '</h2><dl>' + rows.map(([a, b]) => '<dt>' + esc(a) + '</dt><dd>' + esc(b) + '</dd>').join('') + '</dl>' + btn;
  detailEl.style.display = 'block';
  if (parent) document.getElementById('collapse-btn').addEventListener('click', () => collapse(parent));
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
  if (drag && !drag.moved) { const k = hit(e.clientX, e.clientY); if (!expand(k)) showDetail(k); }
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
filterEl.addEventListener('input', () => { clearTimeout(pending); pending = setTimeout(() => { rebuild(); }, 120); });
filterEl.addEventListener('keydown', (e) => { if (e.key === 'Enter') { clearTimeout(pending); fit(true); } });
document.getElementById('fit').addEventListener('click', () => fit(false));
document.getElementById('reset').addEventListener('click', () => { view = model.initial(FIRST_VIEW, legible); rebuild(); showDetail(-1); });
window.addEventListener('resize', () => { resize(); space(g); fit(false); });

const legend = document.getElementById('legend');
const totals = {};
for (let i = 0; i < N; i++) totals[stateOf(i)] = (totals[stateOf(i)] || 0) + 1;
legend.innerHTML = ORDER.filter((s) => totals[s]).map((s) => '<div><i style="background:' + STATES[s].color + '"></i>' + esc(STATES[s].label) + ' <b>' + totals[s] + '</b></div>').join('');
resize();
// The first view: as many clusters opened as stay legible (labels at least ~10 px).
// (A graph too wide for that at any size keeps the scale its top level has.)
const firstScale = Math.min(MIN_FIRST_SCALE, fitScale(geometryOf(model.expand(model.root))));
const legible = (v) => fitScale(geometryOf(v)) >= firstScale;
let view = model.initial(FIRST_VIEW, legible);
rebuild();

// For tests: what is drawn, in page (CSS pixel) coordinates.
window.cairnGraph = {
  units: () => view.map((u, k) => ({ kind: u.kind, label: g.units[k].label, size: g.units[k].size, state: g.units[k].state, ...screenBox(g.boxes[k]) })),
  edges: () => g.paths.map((p) => ({ from: p.from, to: p.to, reversed: p.rev, points: p.segs.map(([x, y]) => screenPoint(x, y)), samples: samples(p) })),
  expand: (k) => expand(k),
  lastMs: () => lastMs,
  scale: () => tf.s,
};
function screenPoint(x, y) { return { x: tf.x + x * tf.s, y: 44 + tf.y + y * tf.s }; }
function screenBox(b) { const p = screenPoint(b.x, b.y); return { x: p.x, y: p.y, w: b.w * tf.s, h: b.h * tf.s }; }
// Points along an edge as drawn (the same curves), to check it stays out of boxes.
function samples(p) {
  const out = [], s = p.segs;
  for (let i = 1; i < s.length; i++) {
    const [ax, ay] = s[i - 1], [bx, by] = s[i];
    const straight = ay === by && i % 2 === 0 && i < s.length - 1;
    for (let t = 0; t <= 1; t += 0.05) {
      let x, y;
      if (straight) { x = ax + (bx - ax) * t; y = ay; }
      else { const mx = (ax + bx) / 2, u = 1 - t; x = u * u * u * ax + 3 * u * u * t * mx + 3 * u * t * t * mx + t * t * t * bx; y = u * u * u * ay + 3 * u * u * t * ay + 3 * u * t * t * by + t * t * t * by; }
      out.push(screenPoint(x, y));
    }
  }
  return out;
}
`;
