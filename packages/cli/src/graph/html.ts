/**
 * The HTML graph: one self-contained page (inline CSS, JS and data) that draws the DAG on a
 * canvas with states as colours, arrowheads on every edge, and a layered layout whose edges run
 * between boxes, fitted to the window. A graph of thousands of steps opens as a few dozen
 * clusters (by name prefix, else by layer) that expand on a click; the layout and clustering run
 * in the page (the same functions as `layeredLayout` and `clusterModel`).
 */
import { htmlPage } from '../html.js';
import { clusterModel } from './clusters.js';
import { layeredLayout } from './layout.js';
import { STATE_COLORS, STATE_LABELS, STEP_STATES, type GraphModel } from './model.js';
import { GRAPH_SCRIPT } from './page-script.js';

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
#detail button { margin-top: 6px; padding: 3px 10px; border: 1px solid #c9ced6; border-radius: 4px; background: #fff; cursor: pointer; }
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
  <button id="fit" type="button">fit</button>
  <button id="reset" type="button">collapse all</button>
  <span id="count"></span>
</header>
<canvas id="canvas"></canvas>
<div id="legend"></div>
<div id="detail"></div>
`;

/** Renders the self-contained HTML page for a graph. */
export function renderGraphHtml(model: GraphModel, options: GraphHtmlOptions = {}): string {
  const title = options.title ?? 'cairn graph';
  const states = Object.fromEntries(STEP_STATES.map((s) => [s, { label: STATE_LABELS[s], color: STATE_COLORS[s] }]));
  // A cluster shows its most urgent member's state.
  const urgency = ['unknown', 'not-examined', 'cached', 'running', 'run', 'drifted', 'failed-before'];
  // Repeated strings (reasons, executors) once, in tables: a 30,000-step page stays a few MB.
  const table = (values: readonly (string | undefined)[]) => {
    const list: string[] = [''];
    const index = new Map<string, number>([['', 0]]);
    const ids = values.map((v) => {
      const key = v ?? '';
      let id = index.get(key);
      if (id === undefined) {
        id = list.length;
        list.push(key);
        index.set(key, id);
      }
      return id;
    });
    return { list, ids };
  };
  const reasons = table(model.nodes.map((n) => n.reason));
  const executors = table(model.nodes.map((n) => n.executor));
  const order = STEP_STATES as readonly string[];
  const data = {
    title,
    states,
    order: STEP_STATES,
    rank: Object.fromEntries(urgency.map((s, i) => [s, i])),
    names: model.nodes.map((n) => n.name),
    hashes: model.nodes.map((n) => n.hash),
    state: model.nodes.map((n) => order.indexOf(n.state)),
    reasons: reasons.list,
    reason: reasons.ids,
    outputs: model.nodes.map((n) => n.output ?? ''),
    executors: executors.list,
    executor: executors.ids,
    edges: model.edges.flat(),
  };
  // Transpilers that keep function names (tsx, vitest) wrap inner functions in `__name(fn, "…")`.
  const code = `const __name = (f) => f;\n${layeredLayout.toString()}\n${clusterModel.toString()}`;
  return htmlPage({ title, css: CSS, body: BODY, data, script: `${code}\n${GRAPH_SCRIPT}` });
}
