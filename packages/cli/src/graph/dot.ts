/** Graphviz dot output. */
import { STATE_COLORS, STATE_LABELS, type GraphModel } from './model.js';

function q(s: string): string {
  return `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** Renders the graph as a Graphviz digraph (dependencies point at their dependents). */
export function renderDot(model: GraphModel): string {
  const lines = [
    'digraph cairn {',
    '  rankdir=LR;',
    '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10, fontcolor="white"];',
    '  edge [color="#8a8f98"];',
  ];
  for (const n of model.nodes) {
    const label = `${n.name}\\n${n.hash.slice(0, 8)} · ${STATE_LABELS[n.state]}`;
    lines.push(`  ${q(n.id)} [label="${label.replace(/"/g, '\\"')}", fillcolor=${q(STATE_COLORS[n.state])}, tooltip=${q(n.reason ?? n.id)}];`);
  }
  for (const [from, to] of model.edges) {
    lines.push(`  ${q((model.nodes[from] as { id: string }).id)} -> ${q((model.nodes[to] as { id: string }).id)};`);
  }
  lines.push('}');
  return `${lines.join('\n')}\n`;
}
