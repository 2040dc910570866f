// A child of ui.bench.mjs: one in-memory run of a layered DAG of `n` no-op steps, whose journal
// the runner itself writes under `prefix` on this filesystem (a MemoryStore with the local
// store's browser: steps in memory, the journal where `cairn ui --prefix prefix` reads it).
// Prints the run's wall and CPU milliseconds.
//   node ui-run-child.mjs PREFIX N [TAG] [--no-journal]
import { StepSpec } from '@cairn/core';
import { LocalStore, MemoryStore, StepRunner } from '@cairn/runner';

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
class JournalOnDisk extends MemoryStore {
  browse = new LocalStore().browse;
}
const journal = !process.argv.includes('--no-journal');
const runner = new StepRunner({ prefix, store: new JournalOnDisk(), journal, logger: { info() {}, warn() {}, error: (m) => console.error(m) } });
const cpu0 = process.cpuUsage();
const t0 = performance.now();
await runner.run(specs, { handleSigint: false });
const ms = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
console.log(JSON.stringify({ ms, cpuMs: (cpu.user + cpu.system) / 1000 }));
