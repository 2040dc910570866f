// The job list of a suite run: which case/variant runs at which size, under which backend,
// and what each row is compared against. One job = one fresh child process.
import { existsSync } from 'node:fs';

/**
 * @typedef {object} Job
 * @property {string} group        rows compared with each other (same shape and n)
 * @property {string} impl         implementation label shown in the table
 * @property {string} case         tools/bench/cases/<case>.mjs
 * @property {string} variant      key of that module's `variants`
 * @property {{ shape: string, n: number, [k: string]: unknown }} params
 * @property {'native'|'js'|null} backend  Cairn's backend (CAIRN_NATIVE=1/0), null for peers
 * @property {boolean} ref         the row other rows of the group are divided by
 * @property {string} [tmp]        scratch location for disk cases (CAIRN_BENCH_TMP)
 * @property {string} [note]
 */

const K = 1_000;
const M = 1_000_000;
const SHAPES_BUT_LAYERED = ['chain', 'fanout', 'fanin', 'lattice'];

/** Both backends of a Cairn case (the native one first, as the reference). */
function both(group, kase, variant, params, extra = {}) {
  return [
    { group, impl: 'Cairn', case: kase, variant, params, backend: 'native', ref: true, ...extra },
    { group, impl: 'Cairn (TS fallback)', case: kase, variant, params, backend: 'js', ref: false, ...extra },
  ];
}

function peer(group, impl, kase, variant, params, extra = {}) {
  return { group, impl, case: kase, variant, params, backend: null, ref: false, ...extra };
}

function cairn(group, impl, kase, variant, params, extra = {}) {
  return { group, impl, case: kase, variant, params, backend: 'native', ref: true, ...extra };
}

/**
 * Jobs for `quick` or full mode. `disk` is the scratch directory of disk cases (the OS temp
 * dir unless `--tmp`); `tmpfs` is /dev/shm when it exists (full mode runs the large disk
 * cases there too, since a loaded ext4 makes each step cost milliseconds).
 */
export function makePlan({ quick, disk, tmpfs = existsSync('/dev/shm') ? '/dev/shm' : null }) {
  const jobs = [];
  const add = (...js) => jobs.push(...js.flat());

  const layeredSizes = quick ? [10 * K] : [K, 10 * K, 100 * K, M];
  const big = quick ? 10 * K : M;
  const shapesAt = (sizes) => [...sizes.map((n) => ({ shape: 'layered', n })), ...(quick ? [] : SHAPES_BUT_LAYERED.map((shape) => ({ shape, n: big })))];

  // Core: lowering and identities end to end, then the backend kernels.
  for (const n of quick ? [10 * K] : [10 * K, 100 * K, M]) add(both('lower()', 'core', 'lower', { shape: 'layered', n }));
  if (!quick) add(both('lower()', 'core', 'lower', { shape: 'chain', n: M }));
  for (const n of quick ? [10 * K] : [100 * K, M]) add(both('computeIdentities', 'core', 'identities', { shape: 'layered', n }));
  for (const p of shapesAt(layeredSizes)) add(both('fingerprintAll (kernel)', 'core', 'fingerprintAll', p));
  // Peers also run the other shapes at 10^5 first, so a peer that is quadratic on a shape
  // (dependency-graph on a 10^6 fan-out) is skipped at 10^6 by the time budget.
  const peerSizes = quick ? [] : SHAPES_BUT_LAYERED.flatMap((shape) => [{ shape, n: 100 * K }, { shape, n: big }]);
  for (const p of [...layeredSizes.map((n) => ({ shape: 'layered', n })), ...peerSizes]) {
    add(both('toposort', 'core', 'toposort', p));
    add(peer('toposort', 'toposort 2.0.2', 'order', 'toposort', p));
    add(peer('toposort', 'graphology 0.26 + graphology-dag', 'order', 'graphology', p));
    add(peer('toposort', 'dependency-graph 1.0', 'order', 'dependency-graph', p));
  }
  for (const p of quick ? [{ shape: 'layered', n: 10 * K }] : [{ shape: 'layered', n: 100 * K }, { shape: 'layered', n: M }, { shape: 'chain', n: M }]) {
    add(both('expand (cold walk)', 'core', 'expand', p));
  }

  // Hashing: one call per short string.
  {
    const p = { shape: 'strings', n: quick ? 10 * K : M };
    add(both('hash, 1 call per ~110 B string', 'hash', 'cairn', p));
    add(peer('hash, 1 call per ~110 B string', 'node:crypto sha256', 'hash', 'node:crypto sha256', p));
    add(peer('hash, 1 call per ~110 B string', 'xxhash-wasm 1.1 h64', 'hash', 'xxhash-wasm', p));
  }

  // The durable-store floor next to the runner's cold run, on each scratch location.
  const diskSizes = quick ? [{ tmp: disk, n: 300, where: 'disk' }] : [{ tmp: disk, n: 3 * K, where: 'disk' }, ...(tmpfs ? [{ tmp: tmpfs, n: 100 * K, where: 'tmpfs' }] : [])];
  for (const { tmp, n, where } of diskSizes) {
    const p = { shape: 'layered', n };
    const group = `cold run vs store floor (${where})`;
    add({ group, impl: 'floor: raw fs ops by hand, sync', case: 'store', variant: 'sync', params: p, backend: null, ref: true, tmp });
    add({ group, impl: 'floor: raw fs ops by hand, async ×64', case: 'store', variant: 'async', params: p, backend: null, ref: false, tmp });
    add({ ...cairn(group, 'Cairn StepRunner, LocalStore', 'runner', 'cold-disk', p, { tmp }), ref: false });
    add({ ...cairn(group, 'Cairn StepRunner, LocalStore, paired with the floor', 'runner', 'cold-paired', p, { tmp }), ref: false });
    add(cairn(`warm rerun, all targets (${where})`, 'Cairn StepRunner, LocalStore', 'runner', 'warm-disk', p, { tmp }));
  }

  // Warm reruns of apply steps (issue 16): every target listed, or only the terminal layer; the
  // default content-addressed layout and the versioned one (fixed paths, drift checked).
  {
    const sizes = quick ? [{ tmp: disk, n: 300, where: 'disk' }] : [...(tmpfs ? [{ tmp: tmpfs, n: 100 * K, where: 'tmpfs' }] : []), { tmp: disk, n: 10 * K, where: 'disk' }];
    for (const { tmp, n, where } of sizes) {
      for (const layout of ['content', 'versioned']) {
        const group = `warm rerun of apply steps (${where}, layout ${layout})`;
        add(cairn(group, 'all targets listed', 'runner', 'warm-apply', { shape: 'layered', n, targets: 'all', layout }, { tmp }));
        add({ ...cairn(group, 'terminal layer listed', 'runner', 'warm-apply', { shape: 'layered', n, targets: 'sinks', layout }, { tmp }), ref: false });
      }
    }
  }

  // Scheduler overhead: the in-memory store vs p-graph on the same no-op graph.
  for (const n of quick ? [10 * K] : [10 * K, 100 * K]) {
    const p = { shape: 'layered', n };
    add(cairn('scheduler overhead (no-op steps)', 'Cairn StepRunner, MemoryStore', 'runner', 'memory', p));
    // The same run with the specs' identities computed before the timer starts (as lower()
    // leaves them): the scheduler's share without the identity hashing of fresh specs.
    add({ ...cairn('scheduler overhead (no-op steps)', 'Cairn StepRunner, MemoryStore, specs hashed untimed', 'runner', 'memory', { ...p, prehash: true }), ref: false });
    add(peer('scheduler overhead (no-op steps)', 'p-graph 2.0 (concurrency 8)', 'runner', 'p-graph', p));
  }

  // Python peers (full mode: their venv comes from PyPI, see python/setup.sh). Dask's local
  // scheduler on the same no-op graphs as p-graph; Snakemake's dry run against Cairn's plan().
  if (!quick) {
    for (const n of [10 * K, 100 * K]) add(peer('scheduler overhead (no-op steps)', 'Dask 2026.8.0 threaded get (8 workers)', 'python', 'dask', { shape: 'layered', n }));
    for (const n of [K, 10 * K, 100 * K]) {
      const group = 'plan (dry run), nothing built';
      add(cairn(group, 'Cairn StepRunner.plan(), LocalStore', 'runner', 'plan', { shape: 'layered', n }));
      add(peer(group, 'Snakemake 9.27.1 -n (one rule of n jobs; process incl. start-up)', 'python', 'snakemake-dry', { shape: 'layered', n }));
    }
  }

  // Handles of one layered graph pulled one at a time from a generator, against the same as an
  // array (issue 32: each pulled handle was lowered with its whole upstream, ×39 at 4k).
  for (const n of quick ? [10 * K] : [10 * K, 100 * K]) {
    const group = 'apply handles of one graph: generator vs array';
    add(cairn(group, 'Cairn StepRunner, MemoryStore, array', 'runner', 'stream', { shape: 'layered', n, from: 'array' }));
    add({ ...cairn(group, 'Cairn StepRunner, MemoryStore, generator', 'runner', 'stream', { shape: 'layered', n, from: 'generator' }), ref: false });
  }

  // A 10,000-step chain, and a realistic pipeline that reads and writes small files.
  {
    const n = quick ? K : 10 * K;
    add(cairn('chain, terminal target', 'Cairn StepRunner, MemoryStore', 'runner', 'memory', { shape: 'chain', n, targets: 'sinks' }));
    add(peer('chain, terminal target', 'p-graph 2.0 (concurrency 8)', 'runner', 'p-graph', { shape: 'chain', n }));
    if (!quick) add(peer('chain, terminal target', 'Dask 2026.8.0 threaded get (8 workers)', 'python', 'dask', { shape: 'chain', n }));
    const where = quick || !tmpfs ? [{ tmp: disk, n: quick ? 300 : 2 * K, label: 'disk' }] : [{ tmp: disk, n: 2 * K, label: 'disk' }, { tmp: tmpfs, n: 10 * K, label: 'tmpfs' }];
    for (const w of where) {
      add({ ...cairn(`chain, terminal target (${w.label})`, 'Cairn StepRunner, LocalStore', 'runner', 'cold-disk', { shape: 'chain', n: w.n, targets: 'sinks' }, { tmp: w.tmp }) });
      add(cairn(`apply pipeline reading/writing files (${w.label})`, 'Cairn lower() + StepRunner, LocalStore', 'runner', 'files', { shape: 'layered', n: w.n }, { tmp: w.tmp }));
      // Beside its raw file-operation floor in the same repetitions (cases/store.mjs filesFloorSync).
      add({ ...cairn(`apply pipeline reading/writing files (${w.label})`, 'Cairn lower() + StepRunner, LocalStore, paired with the floor', 'runner', 'files-paired', { shape: 'layered', n: w.n }, { tmp: w.tmp }), ref: false });
    }
  }

  // Codec.
  {
    const p = { shape: 'layered', n: quick ? 10 * K : 100 * K };
    add(cairn('codec: encode spec graph', 'Cairn encodeSpecs (msgpack)', 'codec', 'msgpack encodeSpecs', p));
    add(peer('codec: encode spec graph', 'JSON.stringify (same fields)', 'codec', 'JSON.stringify', p));
    add(cairn('codec: decode spec graph', 'Cairn decodeSpecs (msgpack, validates, re-hashes)', 'codec', 'msgpack decodeSpecs', p));
    add(peer('codec: decode spec graph', 'JSON.parse (parse only)', 'codec', 'JSON.parse', p));
  }
  return jobs;
}

/** The targets of issue #5, checked against the results. */
export const TARGETS = [
  { label: 'lower() of a 1M-step layered pipeline, native', group: 'lower()', impl: 'Cairn', shape: 'layered', n: M, maxMs: 2000 },
  { label: 'warm rerun of 100k steps, all targets given', group: /^warm rerun, all targets/, impl: 'Cairn StepRunner, LocalStore', n: 100 * K, maxMs: 1000 },
  { label: 'warm rerun of 100k apply steps, all targets given', group: 'warm rerun of apply steps (tmpfs, layout content)', impl: 'all targets listed', n: 100 * K, maxMs: 1000 },
  { label: 'warm rerun of 100k apply steps, terminal layer given', group: 'warm rerun of apply steps (tmpfs, layout content)', impl: 'terminal layer listed', n: 100 * K, maxMs: 100 },
  { label: 'scheduler overhead, 100k layered, in-memory store', group: 'scheduler overhead (no-op steps)', impl: 'Cairn StepRunner, MemoryStore', n: 100 * K, minRate: 500_000 },
];
