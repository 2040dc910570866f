/**
 * Layered DAG layout, linear-ish in nodes + edges, for graphs of thousands of steps.
 *
 * The function is self-contained (no imports, no outer references) because the HTML page
 * embeds its source (`layeredLayout.toString()`) to re-lay out a collapsed or filtered graph
 * in the browser; the same code is tested here.
 */

/** Positions in grid units: column `x`, row `y` per node, and the grid size. */
export interface LayoutResult {
  /** Column of each node. */
  readonly x: number[];
  /** Row of each node. */
  readonly y: number[];
  /** Number of columns. */
  readonly columns: number;
  /** Number of rows. */
  readonly rows: number;
}

/**
 * Lays out `n` nodes with `edges` (`[from, to]`, dependency to dependent) in columns by
 * longest path from the sources, orders each column by the barycentre of its neighbours
 * (two sweeps), and wraps columns taller than `maxRows` into several. Cycles (possible after
 * collapsing) are broken by placing a remaining node anyway.
 */
export function layeredLayout(n: number, edges: ReadonlyArray<readonly [number, number]>, maxRows: number): LayoutResult {
  const preds: number[][] = [];
  const succs: number[][] = [];
  const indeg = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    preds.push([]);
    succs.push([]);
  }
  for (const [a, b] of edges) {
    if (a === b) continue;
    succs[a]!.push(b);
    preds[b]!.push(a);
    indeg[b]!++;
  }
  // Longest-path layering with Kahn's algorithm; a leftover (cyclic) node is forced in.
  const layer = new Int32Array(n);
  const done = new Uint8Array(n);
  const queue: number[] = [];
  for (let i = 0; i < n; i++) if (indeg[i] === 0) queue.push(i);
  let placed = 0;
  let head = 0;
  let scan = 0;
  while (placed < n) {
    if (head === queue.length) {
      while (done[scan]) scan++;
      queue.push(scan);
    }
    const v = queue[head++]!;
    if (done[v]) continue;
    done[v] = 1;
    placed++;
    for (const w of succs[v]!) {
      if (done[w]) continue;
      if (layer[v]! + 1 > layer[w]!) layer[w] = layer[v]! + 1;
      if (--indeg[w]! === 0) queue.push(w);
    }
  }
  let layers = 0;
  for (let i = 0; i < n; i++) if (layer[i]! + 1 > layers) layers = layer[i]! + 1;
  const cols: number[][] = [];
  for (let l = 0; l < layers; l++) cols.push([]);
  for (let i = 0; i < n; i++) cols[layer[i]!]!.push(i);
  // Barycentre ordering: forward by predecessors, backward by successors, forward again.
  const pos = new Float64Array(n);
  for (const c of cols) c.forEach((v, k) => (pos[v] = k));
  const sweep = (order: number[][], nbrs: number[][]) => {
    for (const c of order) {
      const key = new Float64Array(c.length);
      c.forEach((v, k) => {
        const ns = nbrs[v]!;
        let s = 0;
        for (const w of ns) s += pos[w]!;
        key[k] = ns.length > 0 ? s / ns.length : pos[v]!;
      });
      const idx = c.map((_, k) => k).sort((p, q) => key[p]! - key[q]! || p - q);
      const sorted = idx.map((k) => c[k]!);
      sorted.forEach((v, k) => (pos[v] = k));
      c.splice(0, c.length, ...sorted);
    }
  };
  sweep(cols, preds);
  sweep([...cols].reverse(), succs);
  sweep(cols, preds);
  // Grid: each layer takes ceil(size / maxRows) columns; rows centred on the tallest.
  const cap = Math.max(1, Math.floor(maxRows));
  const x: number[] = new Array<number>(n).fill(0);
  const y: number[] = new Array<number>(n).fill(0);
  let rows = 1;
  for (const c of cols) rows = Math.max(rows, Math.min(c.length, cap));
  let col = 0;
  for (const c of cols) {
    const width = Math.max(1, Math.ceil(c.length / cap));
    c.forEach((v, k) => {
      const sub = Math.floor(k / cap);
      const inCol = sub < width - 1 ? cap : c.length - sub * cap;
      x[v] = col + sub;
      y[v] = (k % cap) + (rows - inCol) / 2;
    });
    col += width;
  }
  return { x, y, columns: Math.max(col, 1), rows };
}
