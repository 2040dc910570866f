// A child of ui.bench.mjs: one in-memory run of a layered DAG of `n` no-op steps whose events are
// journalled under `prefix` as `cairn run` does (an append stream of JSON lines, the plan after
// `run-started`), so `cairn ui --prefix prefix` can show and follow it. Prints the run's ms.
//   node ui-run-child.mjs PREFIX N [TAG]
import { createWriteStream, mkdirSync } from 'node:fs';
import { hostname } from 'node:os';
import { indexSpecs, StepSpec } from '@cairn/core';
import { MemoryStore, StepRunner } from '@cairn/runner';

const [prefix, nArg, tag = 'ui'] = process.argv.slice(2);
const N = Number(nArg);
const WIDTH = Math.max(1, Math.round(Math.sqrt(N) * 3));
process.env.CAIRN_PROVENANCE = '0';
const noop = () => undefined;
const specs = [];
for (let i = 0; i < N; i++) {
  const layer = Math.floor(i / WIDTH);
  const deps = layer === 0 ? [] : [specs[(layer - 1) * WIDTH + (i % WIDTH)], specs[(layer - 1) * WIDTH + ((i * 7 + 3) % WIDTH)]];
  // A handful of names, as real pipelines have: the UI groups by name.
  specs.push(new StepSpec({ name: `stage${layer}-${['load', 'clean', 'train', 'eval'][i % 4]}`, hashAttrs: { i, tag }, deps: [...new Set(deps)], fn: noop }));
}
mkdirSync(`${prefix}/.cairn/runs`, { recursive: true });
const runner = new StepRunner({ prefix, store: new MemoryStore(), logger: { info() {}, warn() {}, error: (m) => console.error(m) } });
let out;
runner.on((e) => {
  if (out === undefined) out = createWriteStream(`${prefix}/.cairn/runs/${e.runId}.jsonl`, { flags: 'a' });
  out.write(`${JSON.stringify(e)}\n`);
  if (e.type === 'run-started') {
    const { nodes, index } = indexSpecs(specs);
    out.write(`${JSON.stringify({ type: 'plan', runId: e.runId, time: Date.now(), host: hostname(), user: 'bench', targets: [], steps: nodes.map((s) => ({ name: s.name, path: s.outputPath(prefix), deps: s.deps.map((d) => index.get(d)) })) })}\n`);
  }
});
const t0 = performance.now();
await runner.run(specs, { handleSigint: false });
const ms = performance.now() - t0;
await new Promise((r) => out.end(r));
console.log(JSON.stringify({ ms }));
