// Benchmark: N tiny steps (default 1,000) on a real one-node Slurm and a real one-host Grid Engine
// cell, one job per step versus packed (job arrays whose tasks run many steps in one Node process),
// side by side in one run. Each row is a full StepRunner run on a fresh local store: submissions,
// status queries and wall time from the run's start to its end. Targets (issue 21): packed needs
// ≥ 10× fewer submissions and ≥ 5× less wall time than one job per step.
// Needs: root, Slurm + munge and Grid Engine (tools/testenv/install-system.sh), the built packages
// (`npx nx run-many -t build`).
//   node tools/bench/grid.bench.mjs [steps=1000] [--scheduler slurm,sge] [--packed-only] [--out DIR]
// Results: the table on stdout and in <out>/grid.md, raw rows in <out>/grid.json (default .bench-results).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { StepSpec } from '@cairn/core';
import { StepRunner } from '@cairn/runner';

const root = fileURLToPath(new URL('../..', import.meta.url));
const args = process.argv.slice(2);
const STEPS = Number(args.find((a) => /^\d+$/.test(a)) ?? 1000);
const opt = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const schedulers = opt('--scheduler', 'slurm,sge').split(',');
const out = opt('--out', join(root, '.bench-results'));
const packedOnly = args.includes('--packed-only');
const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');

// The harnesses are TypeScript (shared with the tests): compile them once to temp modules.
const tmp = mkdtempSync(join(tmpdir(), 'cairn-grid-bench-'));
const harness = async (name) => {
  await build({ entryPoints: [join(root, `tools/testenv/${name}.ts`)], outfile: join(tmp, `${name}.mjs`), format: 'esm', platform: 'node', bundle: true, packages: 'external', logLevel: 'silent' });
  return import(pathToFileURL(join(tmp, `${name}.mjs`)).href);
};

const steps = pathToFileURL(join(root, 'tools/testenv/grid-steps.mjs')).href;
const specs = (executor, tag) =>
  Array.from({ length: STEPS }, (_, i) => new StepSpec({ name: `tiny-${i}`, executor, ref: { module: steps, export: 'tiny' }, hashAttrs: { i, tag }, resources: { cpu: 1 } }));

const SETUPS = {
  async slurm() {
    const { startSlurm, missingSlurmBinaries } = await harness('slurm');
    if (missingSlurmBinaries().length > 0) throw new Error(`Slurm is not installed (${missingSlurmBinaries().join(', ')})`);
    const cluster = await startSlurm({ rest: false, cpus: 8 });
    const { createSlurmExecutor } = await import('@cairn/remote-slurm');
    return { label: 'Slurm (1 node, 8 CPUs declared)', stop: () => cluster.stop(), create: (o) => createSlurmExecutor({ env: cluster.env, ...o }) };
  },
  async sge() {
    const { startSge, missingSgeBinaries } = await harness('sge');
    if (missingSgeBinaries().length > 0) throw new Error(`Grid Engine is not installed (${missingSgeBinaries().join(', ')})`);
    const cell = await startSge({ slots: 8 });
    const { createSgeExecutor } = await import('@cairn/remote-sge');
    return { label: 'Grid Engine (1 host, 8 slots)', stop: () => cell.stop(), create: (o) => createSgeExecutor({ env: cell.env, ...o }) };
  },
};

async function measure(setup, scheduler, mode) {
  const prefix = join(tmp, `${scheduler}-${mode}`);
  mkdirSync(prefix, { recursive: true });
  const ex = setup.create(mode === 'packed' ? { pack: {} } : {});
  const loadBefore = load();
  const t0 = performance.now();
  const summary = await new StepRunner({ prefix, executors: [ex], maxConcurrent: STEPS, logger: { info() {}, warn() {}, error: (m) => console.error(m) } }).run(specs(ex.name, mode));
  const wallMs = performance.now() - t0;
  const ok = summary.counts?.succeeded ?? 0;
  if (ok !== STEPS) throw new Error(`${scheduler} ${mode}: ${ok} of ${STEPS} steps succeeded: ${JSON.stringify(summary.counts)}`);
  const row = { scheduler, mode, steps: STEPS, wallMs: Math.round(wallMs), submissions: ex.counters.submissions, statusQueries: ex.counters.statusQueries, accountingQueries: ex.counters.accountingQueries, loadBefore, loadAfter: load() };
  console.log(`grid.bench: ${scheduler} ${mode}: ${STEPS} steps in ${(wallMs / 1000).toFixed(1)} s, ${row.submissions} submissions, ${row.statusQueries} status queries (load ${loadBefore} → ${row.loadAfter})`);
  rmSync(prefix, { recursive: true, force: true });
  return row;
}

const rows = [];
const lines = [`# grid.bench: ${STEPS} tiny steps, one job per step vs packed`, '', `Node ${process.version}; load at start ${load()}.`, ''];
lines.push('| scheduler | mode | wall time | submissions | status queries | fewer submissions | less wall time |', '|---|---|---|---|---|---|---|');
try {
  for (const scheduler of schedulers) {
    const setup = await SETUPS[scheduler]();
    try {
      const single = packedOnly ? undefined : await measure(setup, scheduler, 'single');
      const packed = await measure(setup, scheduler, 'packed');
      rows.push(...[single, packed].filter(Boolean));
      const fmt = (r) => `${(r.wallMs / 1000).toFixed(1)} s`;
      if (single) lines.push(`| ${setup.label} | one job per step | ${fmt(single)} | ${single.submissions} | ${single.statusQueries} | | |`);
      const subX = single ? single.submissions / packed.submissions : undefined;
      const wallX = single ? single.wallMs / packed.wallMs : undefined;
      lines.push(
        `| ${setup.label} | packed | ${fmt(packed)} | ${packed.submissions} | ${packed.statusQueries} | ${subX ? `${subX.toFixed(0)}× ${subX >= 10 ? '(target ≥ 10× met)' : '(target ≥ 10× MISSED)'}` : ''} | ${wallX ? `${wallX.toFixed(1)}× ${wallX >= 5 ? '(target ≥ 5× met)' : '(target ≥ 5× MISSED)'}` : ''} |`,
      );
    } finally {
      await setup.stop();
    }
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
lines.push('', `Load at end ${load()}. Each row: a StepRunner run on a fresh local store, maxConcurrent = ${STEPS}; packed = the default pack policy (25 steps per task).`);
mkdirSync(out, { recursive: true });
writeFileSync(join(out, 'grid.md'), `${lines.join('\n')}\n`);
writeFileSync(join(out, 'grid.json'), `${JSON.stringify({ node: process.version, steps: STEPS, rows }, null, 2)}\n`);
console.log(`\n${lines.join('\n')}`);
