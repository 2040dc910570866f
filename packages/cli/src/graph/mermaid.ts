/** Mermaid flowchart output. */
import { STATE_COLORS, STATE_LABELS, STEP_STATES, type GraphModel, type StepState } from './model.js';

function cls(state: StepState): string {
  return state.replace(/-/g, '_');
}

/** Renders the graph as a Mermaid `flowchart LR` (node ids `n0`, `n1`… in dependency order). */
export function renderMermaid(model: GraphModel): string {
  const lines = ['flowchart LR'];
  model.nodes.forEach((n, i) => {
    const label = `${n.name}<br/>${n.hash.slice(0, 8)} · ${STATE_LABELS[n.state]}`.replace(/"/g, '#quot;');
    lines.push(`  n${i}["${label}"]:::${cls(n.state)}`);
  });
  for (const [from, to] of model.edges) lines.push(`  n${from} --> n${to}`);
  const used = new Set(model.nodes.map((n) => n.state));
  for (const s of STEP_STATES) {
    if (used.has(s)) lines.push(`  classDef ${cls(s)} fill:${STATE_COLORS[s]},stroke:#333,color:#fff`);
  }
  return `${lines.join('\n')}\n`;
}
