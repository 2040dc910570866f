/**
 * A run's DAG on a canvas, legible at 30,000 steps: steps are grouped by (layer, step name)
 * into boxes laid out in columns by depth; each step is a cell coloured by its state, edges are
 * drawn once per pair of groups. Pan (drag) and zoom (wheel) redraw only what is in view;
 * search outlines matching steps; selecting a step dims all but its upstream and downstream.
 */
import { stateColor } from './dom.js';

/** A step as the graph needs it. */
export interface DagStep {
  name: string;
  key: string;
  deps: readonly number[];
  state: string;
}

interface Group {
  name: string;
  layer: number;
  nodes: number[];
  x: number;
  y: number;
  w: number;
  h: number;
  cols: number;
}

const CELL = 12;
const GAP_X = 90;
const GAP_Y = 18;
const PAD = 6;
const HEAD = 20;

/** The graph view. */
export class DagView {
  readonly canvas: HTMLCanvasElement;
  steps: DagStep[] = [];
  groups: Group[] = [];
  groupOf: Int32Array = new Int32Array(0);
  slotOf: Int32Array = new Int32Array(0);
  groupEdges: [number, number][] = [];
  /** View transform: screen = world * scale + offset. */
  scale = 1;
  ox = 0;
  oy = 0;
  selected = -1;
  focus: Set<number> | null = null;
  matches = new Set<number>();
  onSelect: (i: number) => void = () => {};
  onOpen: (i: number) => void = () => {};
  #frame = 0;
  /** Epoch ms of the last full draw (tests and the bench read it). */
  lastDraw = 0;

  constructor(canvas: HTMLCanvasElement) {
    this.canvas = canvas;
    this.#wire();
  }

  /** Lays the steps out again (a new step arrived) and draws. */
  setSteps(steps: DagStep[]): void {
    this.steps = steps;
    this.#layout();
    this.redraw();
  }

  /** A step's state changed: only a redraw. */
  redraw(): void {
    if (this.#frame !== 0) return;
    this.#frame = requestAnimationFrame(() => {
      this.#frame = 0;
      this.draw();
    });
  }

  #layout(): void {
    const n = this.steps.length;
    // Depth by Kahn's order (dependencies may come after dependents when no plan was journalled).
    const layer = new Int32Array(n);
    const indeg = new Int32Array(n);
    const out: number[][] = Array.from({ length: n }, () => []);
    this.steps.forEach((s, i) => {
      for (const d of s.deps) {
        if (d >= 0 && d < n) {
          out[d]!.push(i);
          indeg[i] = indeg[i]! + 1;
        }
      }
    });
    const queue: number[] = [];
    for (let i = 0; i < n; i++) if (indeg[i] === 0) queue.push(i);
    for (let q = 0; q < queue.length; q++) {
      const i = queue[q]!;
      for (const j of out[i]!) {
        layer[j] = Math.max(layer[j]!, layer[i]! + 1);
        if (--indeg[j]! === 0) queue.push(j);
      }
    }
    const byKey = new Map<string, Group>();
    this.groupOf = new Int32Array(n);
    this.slotOf = new Int32Array(n);
    const groups: Group[] = [];
    for (let i = 0; i < n; i++) {
      const key = `${layer[i]}\u0000${this.steps[i]!.name}`;
      let g = byKey.get(key);
      if (g === undefined) {
        g = { name: this.steps[i]!.name, layer: layer[i]!, nodes: [], x: 0, y: 0, w: 0, h: 0, cols: 1 };
        byKey.set(key, g);
        groups.push(g);
      }
      g.nodes.push(i);
    }
    groups.sort((a, b) => a.layer - b.layer || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    let x = 0;
    let layerStart = 0;
    while (layerStart < groups.length) {
      const l = groups[layerStart]!.layer;
      let y = 0;
      let width = 0;
      let k = layerStart;
      for (; k < groups.length && groups[k]!.layer === l; k++) {
        const g = groups[k]!;
        g.cols = Math.max(1, Math.min(g.nodes.length, Math.ceil(Math.sqrt(g.nodes.length * 2.5))));
        const rows = Math.ceil(g.nodes.length / g.cols);
        g.w = Math.max(g.cols * CELL + PAD * 2, 120);
        g.h = HEAD + rows * CELL + PAD;
        g.x = x;
        g.y = y;
        y += g.h + GAP_Y;
        width = Math.max(width, g.w);
      }
      x += width + GAP_X;
      layerStart = k;
    }
    this.groups = groups;
    groups.forEach((g, gi) => g.nodes.forEach((i, slot) => ((this.groupOf[i] = gi), (this.slotOf[i] = slot))));
    const seen = new Set<number>();
    this.groupEdges = [];
    this.steps.forEach((s, i) => {
      for (const d of s.deps) {
        if (d < 0 || d >= n) continue;
        const a = this.groupOf[d]!;
        const b = this.groupOf[i]!;
        if (a === b) continue;
        const k = a * 1_000_003 + b;
        if (!seen.has(k)) {
          seen.add(k);
          this.groupEdges.push([a, b]);
        }
      }
    });
  }

  /** Fits the whole graph in view. */
  fit(): void {
    const { w, h } = this.#size();
    let maxX = 1;
    let maxY = 1;
    for (const g of this.groups) {
      maxX = Math.max(maxX, g.x + g.w);
      maxY = Math.max(maxY, g.y + g.h);
    }
    this.scale = Math.min(2, Math.max(0.02, Math.min((w - 40) / maxX, (h - 40) / maxY)));
    this.ox = 20;
    this.oy = 20;
    this.redraw();
  }

  /** Where step `i`'s cell is, in world coordinates. */
  cellOf(i: number): { x: number; y: number } {
    const g = this.groups[this.groupOf[i]!]!;
    const slot = this.slotOf[i]!;
    return { x: g.x + PAD + (slot % g.cols) * CELL, y: g.y + HEAD + Math.floor(slot / g.cols) * CELL };
  }

  /** Where step `i` is on screen (CSS pixels relative to the canvas). */
  screenOf(i: number): { x: number; y: number } {
    const c = this.cellOf(i);
    return { x: (c.x + CELL / 2) * this.scale + this.ox, y: (c.y + CELL / 2) * this.scale + this.oy };
  }

  /** Centres step `i` at a zoom where its cell is readable. */
  centerOn(i: number): void {
    const { w, h } = this.#size();
    const c = this.cellOf(i);
    this.scale = Math.max(this.scale, 1.5);
    this.ox = w / 2 - (c.x + CELL / 2) * this.scale;
    this.oy = h / 2 - (c.y + CELL / 2) * this.scale;
    this.redraw();
  }

  /** Selects step `i` (-1: none): everything but its upstream and downstream is dimmed. */
  select(i: number): void {
    this.selected = i;
    this.focus = i < 0 ? null : this.#lineage(i);
    this.redraw();
  }

  #lineage(i: number): Set<number> {
    const set = new Set<number>([i]);
    const up = [i];
    while (up.length > 0) for (const d of this.steps[up.pop()!]!.deps) if (!set.has(d)) (set.add(d), up.push(d));
    const dependents: number[][] = Array.from({ length: this.steps.length }, () => []);
    this.steps.forEach((s, j) => s.deps.forEach((d) => dependents[d]?.push(j)));
    const down = [i];
    while (down.length > 0) for (const d of dependents[down.pop()!]!) if (!set.has(d)) (set.add(d), down.push(d));
    return set;
  }

  /** Steps whose name or key contains `query` (case-insensitive). */
  search(query: string): number[] {
    const q = query.trim().toLowerCase();
    const found: number[] = [];
    if (q !== '') this.steps.forEach((s, i) => (s.name.toLowerCase().includes(q) || s.key.toLowerCase().includes(q)) && found.push(i));
    this.matches = new Set(found);
    this.redraw();
    return found;
  }

  #size(): { w: number; h: number } {
    const r = this.canvas.getBoundingClientRect();
    return { w: Math.max(1, r.width), h: Math.max(1, r.height) };
  }

  /** Draws what is in view. */
  draw(): void {
    const { w, h } = this.#size();
    const dpr = window.devicePixelRatio || 1;
    if (this.canvas.width !== Math.round(w * dpr) || this.canvas.height !== Math.round(h * dpr)) {
      this.canvas.width = Math.round(w * dpr);
      this.canvas.height = Math.round(h * dpr);
    }
    const ctx = this.canvas.getContext('2d')!;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = '#ffffff';
    ctx.fillRect(0, 0, w, h);
    const s = this.scale;
    const vx0 = -this.ox / s;
    const vy0 = -this.oy / s;
    const vx1 = (w - this.ox) / s;
    const vy1 = (h - this.oy) / s;
    const visible = (g: Group) => g.x + g.w >= vx0 && g.x <= vx1 && g.y + g.h >= vy0 && g.y <= vy1;
    const groupLit = (gi: number) => this.focus === null || this.groups[gi]!.nodes.some((i) => this.focus!.has(i));
    ctx.setTransform(dpr * s, 0, 0, dpr * s, dpr * this.ox, dpr * this.oy);
    ctx.lineWidth = 1 / s;
    for (const [a, b] of this.groupEdges) {
      const ga = this.groups[a]!;
      const gb = this.groups[b]!;
      if (!visible(ga) && !visible(gb) && (ga.x > vx1 || gb.x + gb.w < vx0)) continue;
      const lit = this.focus === null || (groupLit(a) && groupLit(b));
      ctx.strokeStyle = lit ? '#7b8290' : 'rgba(123,130,144,0.12)';
      const x0 = ga.x + ga.w;
      const y0 = ga.y + ga.h / 2;
      const x1 = gb.x;
      const y1 = gb.y + gb.h / 2;
      ctx.beginPath();
      ctx.moveTo(x0, y0);
      ctx.bezierCurveTo(x0 + GAP_X / 2, y0, x1 - GAP_X / 2, y1, x1, y1);
      ctx.stroke();
    }
    const cellPx = CELL * s;
    for (let gi = 0; gi < this.groups.length; gi++) {
      const g = this.groups[gi]!;
      if (!visible(g)) continue;
      const lit = groupLit(gi);
      ctx.globalAlpha = lit ? 1 : 0.15;
      ctx.fillStyle = '#f4f5f7';
      ctx.strokeStyle = '#aab0bb';
      ctx.fillRect(g.x, g.y, g.w, g.h);
      ctx.strokeRect(g.x, g.y, g.w, g.h);
      if (cellPx >= 2) {
        const inner = cellPx >= 4 ? CELL - 2 : CELL;
        for (let slot = 0; slot < g.nodes.length; slot++) {
          const i = g.nodes[slot]!;
          const cx = g.x + PAD + (slot % g.cols) * CELL;
          const cy = g.y + HEAD + Math.floor(slot / g.cols) * CELL;
          if (cx > vx1 || cy > vy1 || cx + CELL < vx0 || cy + CELL < vy0) continue;
          ctx.globalAlpha = this.focus === null || this.focus.has(i) ? 1 : 0.15;
          ctx.fillStyle = stateColor(this.steps[i]!.state);
          ctx.fillRect(cx, cy, inner, inner);
        }
      } else {
        // Too small for cells: one bar per group, split by state.
        const counts = new Map<string, number>();
        for (const i of g.nodes) counts.set(this.steps[i]!.state, (counts.get(this.steps[i]!.state) ?? 0) + 1);
        let x = g.x + PAD;
        const bw = g.w - PAD * 2;
        for (const [state, c] of counts) {
          ctx.fillStyle = stateColor(state);
          ctx.fillRect(x, g.y + HEAD, (bw * c) / g.nodes.length, g.h - HEAD - PAD);
          x += (bw * c) / g.nodes.length;
        }
      }
    }
    // Labels in screen pixels, so a name stays readable at any zoom: inside the box's head when
    // it is tall enough on screen, else just above it; boxes too narrow for text get none.
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.font = '12px system-ui, sans-serif';
    ctx.textBaseline = 'alphabetic';
    for (let gi = 0; gi < this.groups.length; gi++) {
      const g = this.groups[gi]!;
      if (!visible(g) || g.w * s < 36) continue;
      const x = g.x * s + this.ox;
      const inside = HEAD * s >= 14;
      const y = inside ? g.y * s + this.oy + 14 : g.y * s + this.oy - 3;
      ctx.globalAlpha = groupLit(gi) ? 1 : 0.3;
      ctx.fillStyle = '#1f2430';
      ctx.save();
      ctx.beginPath();
      ctx.rect(x, y - 13, Math.max(36, g.w * s), 17);
      ctx.clip();
      ctx.fillText(`${g.name}${g.nodes.length > 1 ? ` ×${g.nodes.length}` : ''}`, x + 4, y);
      ctx.restore();
    }
    ctx.setTransform(dpr * s, 0, 0, dpr * s, dpr * this.ox, dpr * this.oy);
    ctx.globalAlpha = 1;
    ctx.lineWidth = 2 / s;
    ctx.strokeStyle = '#111827';
    for (const i of this.matches) {
      const c = this.cellOf(i);
      ctx.strokeRect(c.x - 1, c.y - 1, CELL, CELL);
    }
    if (this.selected >= 0 && this.selected < this.steps.length) {
      const c = this.cellOf(this.selected);
      ctx.strokeStyle = '#d946ef';
      ctx.lineWidth = 3 / s;
      ctx.strokeRect(c.x - 2, c.y - 2, CELL + 2, CELL + 2);
    }
    this.lastDraw = Date.now();
  }

  /** The step under a screen point, or -1. */
  hit(px: number, py: number): number {
    const x = (px - this.ox) / this.scale;
    const y = (py - this.oy) / this.scale;
    for (const g of this.groups) {
      if (x < g.x || x > g.x + g.w || y < g.y || y > g.y + g.h) continue;
      const col = Math.floor((x - g.x - PAD) / CELL);
      const row = Math.floor((y - g.y - HEAD) / CELL);
      const slot = row * g.cols + col;
      if (col >= 0 && col < g.cols && row >= 0 && slot < g.nodes.length) return g.nodes[slot]!;
      return g.nodes[0]!;
    }
    return -1;
  }

  #wire(): void {
    const c = this.canvas;
    let drag: { x: number; y: number; ox: number; oy: number; moved: boolean } | null = null;
    c.addEventListener('mousedown', (e) => (drag = { x: e.clientX, y: e.clientY, ox: this.ox, oy: this.oy, moved: false }));
    window.addEventListener('mousemove', (e) => {
      if (drag === null) return;
      if (Math.abs(e.clientX - drag.x) + Math.abs(e.clientY - drag.y) > 3) drag.moved = true;
      this.ox = drag.ox + e.clientX - drag.x;
      this.oy = drag.oy + e.clientY - drag.y;
      this.redraw();
    });
    window.addEventListener('mouseup', (e) => {
      if (drag !== null && !drag.moved && e.target === c) {
        const r = c.getBoundingClientRect();
        const i = this.hit(e.clientX - r.left, e.clientY - r.top);
        this.select(i);
        this.onSelect(i);
      }
      drag = null;
    });
    c.addEventListener('dblclick', (e) => {
      const r = c.getBoundingClientRect();
      const i = this.hit(e.clientX - r.left, e.clientY - r.top);
      if (i >= 0) this.onOpen(i);
    });
    c.addEventListener(
      'wheel',
      (e) => {
        e.preventDefault();
        const r = c.getBoundingClientRect();
        const mx = e.clientX - r.left;
        const my = e.clientY - r.top;
        const k = Math.exp(-e.deltaY * 0.0015);
        const next = Math.min(8, Math.max(0.01, this.scale * k));
        this.ox = mx - ((mx - this.ox) * next) / this.scale;
        this.oy = my - ((my - this.oy) * next) / this.scale;
        this.scale = next;
        this.redraw();
      },
      { passive: false },
    );
    new ResizeObserver(() => this.redraw()).observe(c);
  }
}
