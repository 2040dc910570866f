/**
 * Layered DAG layout (Sugiyama-style) for the graph page: layers by longest path, long edges
 * broken into chains of dummy points (one per layer they cross), orders by barycentre sweeps,
 * then rows that pull each node toward its neighbours without overlapping. An edge runs through
 * its dummies, which sit in gaps of their layer like nodes do, so it never crosses a box.
 *
 * The function is self-contained (no imports, no outer references) because the HTML page
 * embeds its source (`layeredLayout.toString()`) to re-lay out the graph when a cluster is
 * expanded; the same code is tested here.
 */

/** Where everything goes, in layout units: layer index across, row position down. */
export interface LayoutResult {
  /** Layer of each node. */
  readonly layer: number[];
  /** Row position of each node's centre (a node is 1 unit tall; a dummy point `dummyHeight`). */
  readonly y: number[];
  /** Number of layers. */
  readonly layers: number;
  /** Height of the tallest layer, in row units. */
  readonly height: number;
  /**
   * For each input edge: the points it runs through, flattened `[layer, y, layer, y, …]` from
   * left to right (endpoints included): source to target, or target to source for a reversed edge.
   */
  readonly routes: number[][];
  /** Edges reversed to break cycles (their arrow still points at the original target). */
  readonly reversed: boolean[];
}

/**
 * Lays out `n` nodes and `edges` (`[from, to]`, dependency → dependent). `dummyHeight` is the
 * room a passing edge takes in a layer, as a fraction of a node's. Cycles (possible between
 * clusters) are broken by reversing the back edges of a depth-first search.
 */
export function layeredLayout(n: number, edges: ReadonlyArray<readonly [number, number]>, dummyHeight = 0.3): LayoutResult {
  // 1. Break cycles: iterative DFS, a back edge (to a node on the stack) is reversed.
  const out: number[][] = [];
  for (let i = 0; i < n; i++) out.push([]);
  edges.forEach(([a, b], k) => {
    if (a !== b) out[a]!.push(k);
  });
  const reversed: boolean[] = edges.map(() => false);
  const mark = new Uint8Array(n); // 0 new, 1 on stack, 2 done
  for (let root = 0; root < n; root++) {
    if (mark[root]) continue;
    const stack: [number, number][] = [[root, 0]];
    mark[root] = 1;
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const [v, i] = top;
      if (i >= out[v]!.length) {
        mark[v] = 2;
        stack.pop();
        continue;
      }
      top[1] = i + 1;
      const k = out[v]![i]!;
      const w = edges[k]![1];
      if (mark[w] === 1) reversed[k] = true;
      else if (mark[w] === 0) {
        mark[w] = 1;
        stack.push([w, 0]);
      }
    }
  }
  const dir = (k: number): [number, number] => {
    const [a, b] = edges[k]!;
    return reversed[k] ? [b, a] : [a, b];
  };
  // 2. Layers: longest path from the sources (Kahn's order).
  const indeg = new Int32Array(n);
  const succ: number[][] = [];
  for (let i = 0; i < n; i++) succ.push([]);
  edges.forEach((e, k) => {
    if (e[0] === e[1]) return;
    const [a, b] = dir(k);
    succ[a]!.push(b);
    indeg[b]!++;
  });
  const layer: number[] = new Array<number>(n).fill(0);
  const queue: number[] = [];
  for (let i = 0; i < n; i++) if (indeg[i] === 0) queue.push(i);
  for (let h = 0; h < queue.length; h++) {
    const v = queue[h]!;
    for (const w of succ[v]!) {
      if (layer[v]! + 1 > layer[w]!) layer[w] = layer[v]! + 1;
      if (--indeg[w]! === 0) queue.push(w);
    }
  }
  let layers = 0;
  for (let i = 0; i < n; i++) layers = Math.max(layers, layer[i]! + 1);
  // 3. Dummy points for edges that span more than one layer.
  const lay: number[] = layer.slice();
  const size: number[] = new Array<number>(n).fill(1);
  const up: number[][] = []; // neighbours in the layer before
  const down: number[][] = []; // neighbours in the layer after
  for (let i = 0; i < n; i++) {
    up.push([]);
    down.push([]);
  }
  const chains: number[][] = [];
  edges.forEach((e, k) => {
    if (e[0] === e[1]) {
      chains.push([e[0]]);
      return;
    }
    const [a, b] = dir(k);
    const chain = [a];
    let prev = a;
    for (let l = lay[a]! + 1; l < lay[b]!; l++) {
      const d = lay.length;
      lay.push(l);
      size.push(dummyHeight);
      up.push([prev]);
      down.push([]);
      down[prev]!.push(d);
      chain.push(d);
      prev = d;
    }
    down[prev]!.push(b);
    up[b]!.push(prev);
    chain.push(b);
    chains.push(chain);
  });
  const total = lay.length;
  // 4. Order within layers: first by discovery, then barycentre sweeps down and up.
  const cols: number[][] = [];
  for (let l = 0; l < layers; l++) cols.push([]);
  const seen = new Uint8Array(total);
  const visit = (s: number) => {
    const st = [s];
    while (st.length > 0) {
      const v = st.pop()!;
      if (seen[v]) continue;
      seen[v] = 1;
      cols[lay[v]!]!.push(v);
      for (let j = down[v]!.length - 1; j >= 0; j--) st.push(down[v]![j]!);
    }
  };
  for (let i = 0; i < n; i++) if (up[i]!.length === 0) visit(i);
  for (let i = 0; i < total; i++) visit(i);
  const pos = new Float64Array(total);
  const place = () => cols.forEach((c) => c.forEach((v, k) => (pos[v] = k)));
  place();
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
  const reversedCols = [...cols].reverse();
  for (let pass = 0; pass < 4; pass++) {
    sweep(cols, up);
    sweep(reversedCols, down);
  }
  sweep(cols, up);
  // 5. Rows: stack each layer, then pull nodes toward their neighbours' rows (keeping order
  //    and room), alternating directions; finally shift everything to start at 0.
  const y = new Float64Array(total);
  for (const c of cols) {
    let at = 0;
    for (const v of c) {
      y[v] = at + size[v]! / 2;
      at += size[v]!;
    }
  }
  const settle = (c: number[], want: Float64Array) => {
    // Keep order with room between neighbours, as close as possible to `want`: push down, then
    // pull up, then average the two.
    const lo = new Float64Array(c.length);
    const hi = new Float64Array(c.length);
    for (let k = 0; k < c.length; k++) {
      const v = c[k]!;
      lo[k] = k === 0 ? want[k]! : Math.max(want[k]!, lo[k - 1]! + (size[c[k - 1]!]! + size[v]!) / 2);
    }
    for (let k = c.length - 1; k >= 0; k--) {
      const v = c[k]!;
      hi[k] = k === c.length - 1 ? want[k]! : Math.min(want[k]!, hi[k + 1]! - (size[c[k + 1]!]! + size[v]!) / 2);
    }
    for (let k = 0; k < c.length; k++) y[c[k]!] = (lo[k]! + hi[k]!) / 2;
    // The average of two valid placements can still overlap: one last push down.
    for (let k = 1; k < c.length; k++) {
      const min = y[c[k - 1]!]! + (size[c[k - 1]!]! + size[c[k]!]!) / 2;
      if (y[c[k]!]! < min) y[c[k]!] = min;
    }
  };
  for (let pass = 0; pass < 8; pass++) {
    const order = pass % 2 === 0 ? cols : reversedCols;
    const nbrs = pass % 2 === 0 ? up : down;
    for (const c of order) {
      const want = new Float64Array(c.length);
      c.forEach((v, k) => {
        const ns = nbrs[v]!;
        if (ns.length === 0) want[k] = y[v]!;
        else {
          const ys = ns.map((w) => y[w]!).sort((a, b) => a - b);
          const m = ys.length >> 1;
          want[k] = ys.length % 2 === 1 ? ys[m]! : (ys[m - 1]! + ys[m]!) / 2;
        }
      });
      settle(c, want);
    }
  }
  let minY = Infinity;
  let maxY = -Infinity;
  for (let v = 0; v < total; v++) {
    minY = Math.min(minY, y[v]! - size[v]! / 2);
    maxY = Math.max(maxY, y[v]! + size[v]! / 2);
  }
  if (total === 0) minY = maxY = 0;
  const ys: number[] = [];
  for (let v = 0; v < total; v++) ys.push(y[v]! - minY);
  const routes = chains.map((chain) => {
    const pts: number[] = [];
    for (const v of chain) pts.push(lay[v]!, ys[v]!);
    return pts;
  });
  return { layer, y: ys.slice(0, n), layers: Math.max(layers, 1), height: maxY - minY, routes, reversed };
}
