/**
 * Clusters for graphs of thousands of steps: steps grouped by name prefix (`tokenize-shard-0001`
 * … share `tokenize-shard`), else by layer, else into ranges, so the first view has a few dozen
 * boxes and a click on one expands it into its parts.
 *
 * Self-contained (no imports, no outer references): the HTML page embeds the source
 * (`clusterModel.toString()`), and the same code is tested here.
 */

/** A visible box: one step, or a group of steps that expands on a click. */
export type ClusterUnit =
  | { readonly kind: 'step'; readonly step: number; readonly parent: ClusterGroup | null }
  | ClusterGroup;

/** A group of steps. */
export interface ClusterGroup {
  readonly kind: 'group';
  /** Unique within the model. */
  readonly id: number;
  /** What the members share (`tokenize-shard`, `shard · L3`, `shard · L3 · 1–250`). */
  readonly label: string;
  /** The name part of the label (`shard`). */
  readonly base: string;
  /** Member step indices, ascending. */
  readonly steps: readonly number[];
  /** Name tokens every member shares. */
  readonly depth: number;
  /** The group it was expanded from (null for the root). */
  readonly parent: ClusterGroup | null;
}

/** Options of {@link clusterModel}. */
export interface ClusterOptions {
  /** Most parts a group expands into. @default 24 */
  readonly maxChildren?: number;
  /** A group this small expands into its steps. @default 12 */
  readonly small?: number;
}

/**
 * Builds the model over steps with `names` and `layers` (their layer in the step graph).
 * `expand(group)` returns its parts: by the next name token when that gives 2..maxChildren
 * parts, else by layer (ranges of layers when there are many), else into ranges of steps.
 * `initial(limit)` expands the largest groups first while the view stays within `limit` boxes.
 */
export function clusterModel(names: readonly string[], layers: readonly number[], options: ClusterOptions = {}) {
  const maxChildren = Math.max(2, options.maxChildren ?? 24);
  const small = Math.max(1, options.small ?? 12);
  // Tokens of each distinct name, with where each ends in the name (to label a prefix).
  const tokenCache = new Map<string, { tokens: string[]; ends: number[] }>();
  const tokensOf = (i: number) => {
    const name = names[i]!;
    let t = tokenCache.get(name);
    if (t === undefined) {
      const tokens: string[] = [];
      const ends: number[] = [];
      const re = /[A-Za-z]+|\d+|[^\s/._:\-A-Za-z\d]+/g;
      for (let m = re.exec(name); m !== null; m = re.exec(name)) {
        tokens.push(m[0]);
        ends.push(m.index + m[0].length);
      }
      t = { tokens, ends };
      tokenCache.set(name, t);
    }
    return t;
  };
  let nextId = 0;
  const group = (base: string, label: string, steps: number[], depth: number, parent: ClusterGroup | null): ClusterGroup => ({ kind: 'group', id: nextId++, label, base, steps, depth, parent });
  const unit = (base: string, label: string, steps: number[], depth: number, parent: ClusterGroup): ClusterUnit =>
    steps.length === 1 ? { kind: 'step', step: steps[0]!, parent } : group(base, label, steps, depth, parent);
  const all: number[] = [];
  for (let i = 0; i < names.length; i++) all.push(i);
  const root = group('all steps', 'all steps', all, 0, null);

  const byName = (g: ClusterGroup): ClusterUnit[] | undefined => {
    let d = g.depth;
    for (;;) {
      const buckets = new Map<string, number[]>();
      const self: number[] = [];
      for (const i of g.steps) {
        const t = tokensOf(i).tokens;
        if (t.length <= d) self.push(i);
        else {
          const key = t[d]!;
          const b = buckets.get(key);
          if (b === undefined) buckets.set(key, [i]);
          else b.push(i);
        }
      }
      // Everyone shares the next token: look one further.
      if (buckets.size === 1 && self.length === 0) {
        d++;
        continue;
      }
      const parts = buckets.size + (self.length > 0 ? 1 : 0);
      if (parts < 2 || parts > maxChildren) return undefined;
      const out: ClusterUnit[] = [];
      if (self.length > 0) out.push(unit(names[self[0]!]!, names[self[0]!]!, self, d, g));
      for (const steps of buckets.values()) {
        // Label a bucket by everything its members share (`download-shard`, not `download`).
        const first = steps[0]!;
        const t0 = tokensOf(first).tokens;
        let depth = d + 1;
        while (depth < t0.length && steps.every((i) => tokensOf(i).tokens.length > depth + 1 && tokensOf(i).tokens[depth] === t0[depth])) depth++;
        const prefix = names[first]!.slice(0, tokensOf(first).ends[depth - 1]!);
        out.push(unit(prefix, prefix, steps, depth, g));
      }
      return out;
    }
  };

  const byLayer = (g: ClusterGroup): ClusterUnit[] | undefined => {
    const buckets = new Map<number, number[]>();
    for (const i of g.steps) {
      const l = layers[i] ?? 0;
      const b = buckets.get(l);
      if (b === undefined) buckets.set(l, [i]);
      else b.push(i);
    }
    if (buckets.size < 2) return undefined;
    const keys = [...buckets.keys()].sort((a, b) => a - b);
    // Many layers: consecutive ranges of about equal size.
    const ranges: number[][] = [];
    const per = Math.ceil(g.steps.length / Math.min(maxChildren, keys.length));
    let cur: number[] = [];
    let from = keys[0]!;
    let to = from;
    const flush = () => {
      if (cur.length === 0) return;
      ranges.push([from, to, ...cur]);
      cur = [];
    };
    for (const k of keys) {
      const b = buckets.get(k)!;
      if (cur.length > 0 && cur.length + b.length > per && ranges.length < maxChildren - 1) flush();
      if (cur.length === 0) from = k;
      to = k;
      for (const i of b) cur.push(i);
    }
    flush();
    if (ranges.length < 2) return undefined;
    return ranges.map(([a, b, ...steps]) => unit(g.base, `${g.base} · L${a === b ? a : `${a}–${b}`}`, steps.sort((p, q) => p - q), g.depth, g));
  };

  const byRange = (g: ClusterGroup): ClusterUnit[] => {
    // Ranges of a group whose steps share name and layer: few parts, each expandable again.
    const parts = Math.min(Math.ceil(maxChildren / 2), Math.ceil(g.steps.length / small));
    const per = Math.ceil(g.steps.length / parts);
    const out: ClusterUnit[] = [];
    // Named by the first and last member's distinct part (`download-shard 00000–00749`) when
    // names differ, else by position (`shard · L3 · 1–107`).
    const rest = (i: number) => (names[i]!.startsWith(g.base) ? names[i]!.slice(g.base.length).replace(/^[\s/._:-]+/, '') : '');
    for (let k = 0; k < g.steps.length; k += per) {
      const steps = g.steps.slice(k, k + per);
      const [a, b] = [rest(steps[0]!), rest(steps[steps.length - 1]!)];
      const label = a !== '' && b !== '' && a !== b ? `${g.base} ${a}–${b}` : `${g.label} · ${k + 1}–${k + steps.length}`;
      out.push(unit(g.base, label, steps, g.depth, g));
    }
    return out;
  };

  const cache = new Map<number, ClusterUnit[]>();
  /** The parts of `g` (the same objects every time). */
  const expand = (g: ClusterGroup): ClusterUnit[] => {
    let parts = cache.get(g.id);
    if (parts === undefined) {
      parts = g.steps.length <= small ? g.steps.map((step) => ({ kind: 'step' as const, step, parent: g })) : (byName(g) ?? byLayer(g) ?? byRange(g));
      cache.set(g.id, parts);
    }
    return parts;
  };

  /**
   * The first view: expands the largest groups first while the view stays within `limit` boxes
   * and `accept(view)` holds (the page checks the view still fits legibly); tries `tries`
   * groups per round before it stops.
   */
  const initial = (limit: number, accept: (view: readonly ClusterUnit[]) => boolean = () => true, tries = 3): ClusterUnit[] => {
    let view: ClusterUnit[] = [root];
    for (;;) {
      const order = view.map((_, k) => k).filter((k) => view[k]!.kind === 'group');
      order.sort((a, b) => (view[b] as ClusterGroup).steps.length - (view[a] as ClusterGroup).steps.length);
      let next: ClusterUnit[] | undefined;
      for (const k of order.slice(0, tries)) {
        const parts = expand(view[k] as ClusterGroup);
        const candidate = [...view.slice(0, k), ...parts, ...view.slice(k + 1)];
        // The root always opens (one box saying "all steps" shows nothing).
        if (candidate.length <= limit && (view[k] === root || accept(candidate))) {
          next = candidate;
          break;
        }
      }
      if (next === undefined) return view;
      view = next;
    }
  };

  return { root, expand, initial };
}
