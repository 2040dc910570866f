// @cairn/runner end to end, with p-graph running the same no-op promise graph as a peer.
// Specs are built fresh (untimed) before every repetition, so each timed run includes what a
// real run pays: identity hashing, expansion, cache checks, scheduling and store writes.
// Disk cases use a fresh scratch directory per repetition under $CAIRN_BENCH_TMP (default: the
// OS temp dir), removed untimed.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import * as core from '@cairn/core';
import native from '@cairn/native';
import { LocalStore, MemoryStore, StepRunner } from '@cairn/runner';
import { edgeList, generate, sinks, toHandles, toSpecs } from '../generators.mjs';
import { scratch } from '../lib/tmp.mjs';
import { check, median, timeAsync, timeSync } from '../lib/timing.mjs';
import { filesFloorSync, variants as storeVariants } from './store.mjs';

const require = createRequire(import.meta.url);
process.env.CAIRN_PROVENANCE = '0';
const quiet = { info() {}, warn: (m) => console.warn(m), error: (m) => console.error(m) };
let tagCounter = 0;

/** Fresh specs for the graph and the targets to pass to `run()`. */
function specsFor(graph, targets, tag = `t${tagCounter++}`) {
  const specs = toSpecs(core, graph, { tag });
  const list = targets === 'all' ? specs : [...sinks(graph)].map((i) => specs[i]);
  return { specs, list };
}

function ran(summary, n, state) {
  const got = summary.counts[state] ?? 0;
  check(got === n, `expected ${n} ${state} steps, got ${JSON.stringify(summary.counts)}`);
}

function runner(store, prefix, maxConcurrent) {
  return new StepRunner({ prefix, store, logger: quiet, maxConcurrent });
}

/**
 * The bookkeeping of a row paired with its floor: `record(floorMs, ms)` after each repetition
 * returns what the repetition reports, its time and, once past the warm-up pairs, the floor's
 * median and the median per-pair ratio so far (lib/child.mjs keeps the last metrics).
 */
function pairing(warmup) {
  const floors = [];
  const ratios = [];
  let pairs = 0;
  return (floorMs, ms) => {
    if (pairs++ >= warmup) {
      floors.push(floorMs);
      ratios.push(ms / floorMs);
    }
    return floors.length > 0 ? { ms, pairedFloorMs: median(floors), pairedRatio: median(ratios) } : ms;
  };
}

export const variants = {
  /**
   * Cold run of n no-op steps (all listed as targets) with the in-memory store: scheduler
   * overhead. `prehash`: the specs' identities are computed untimed, before the run.
   */
  async memory({ shape, n, targets = 'all', maxConcurrent = 8, prehash = false }) {
    const graph = generate(shape, n);
    return async () => {
      const { specs, list } = specsFor(graph, targets);
      if (prehash) core.computeIdentities(specs);
      const r = runner(new MemoryStore(), '/bench', maxConcurrent);
      let summary;
      const ms = await timeAsync(async () => {
        summary = await r.run(list, { handleSigint: false });
      });
      ran(summary, n, 'succeeded');
      return ms;
    };
  },

  /** Cold run of n no-op steps with the local-disk store (sync I/O, the default). */
  async 'cold-disk'({ shape, n, targets = 'all', maxConcurrent = 8, io = 'sync' }) {
    const graph = generate(shape, n);
    return async () => {
      const { list } = specsFor(graph, targets);
      const s = scratch('cold');
      try {
        const r = runner(new LocalStore({ io }), s.dir, maxConcurrent);
        let summary;
        const ms = await timeAsync(async () => {
          summary = await r.run(list, { handleSigint: false });
        });
        ran(summary, n, 'succeeded');
        return ms;
      } finally {
        s.remove();
      }
    };
  },

  /**
   * The cold disk run paired with the raw-fs floor: each repetition times the floor, then the
   * runner, back to back on fresh directories of the same disk. A disk whose speed drifts (burst
   * credits, other tenants) moves both halves of a pair alike, which separate rows minutes
   * apart do not; the row reports the runner's time and, as metrics, the floor's median and the
   * median of the per-pair ratios (warm-up pairs excluded).
   */
  async 'cold-paired'({ shape, n, maxConcurrent = 8, warmup = 1 }) {
    const graph = generate(shape, n);
    const floor = await storeVariants.sync({ n });
    const record = pairing(warmup);
    return async () => {
      const floorMs = await floor();
      const { list } = specsFor(graph, 'all');
      const s = scratch('paired');
      try {
        const r = runner(new LocalStore(), s.dir, maxConcurrent);
        let summary;
        const ms = await timeAsync(async () => {
          summary = await r.run(list, { handleSigint: false });
        });
        ran(summary, n, 'succeeded');
        return record(floorMs, ms);
      } finally {
        s.remove();
      }
    };
  },

  /** Rerun with everything built (one cold run first, untimed), every step listed as a target. */
  async 'warm-disk'({ shape, n, targets = 'all', maxConcurrent = 8 }) {
    const graph = generate(shape, n);
    const s = scratch('warm');
    const first = specsFor(graph, 'all', 'warm');
    const setup = await runner(new LocalStore(), s.dir, maxConcurrent).run(first.list, { handleSigint: false });
    ran(setup, n, 'succeeded');
    const once = async () => {
      const { list } = specsFor(graph, targets, 'warm'); // same tag: same identities, freshly lowered
      const r = runner(new LocalStore(), s.dir, maxConcurrent);
      let summary;
      const ms = await timeAsync(async () => {
        summary = await r.run(list, { handleSigint: false });
      });
      check((summary.counts.succeeded ?? 0) === 0, `a warm rerun ran nothing (${JSON.stringify(summary.counts)})`);
      return ms;
    };
    once.cleanup = s.remove;
    return once;
  },

  /**
   * The warm rerun paired with its read floor: each repetition first reads every step's status
   * and record with the native batch reader alone (chunks of 512 steps, one in flight per core,
   * as the local store reads them; no identities, no expansion, no decoding, no journal), then
   * times the warm rerun. Reports the rerun's time and, as metrics, the floor's median and the
   * median per-pair ratio (warm-up pairs excluded). Needs @cairn/native.
   */
  async 'warm-paired'({ shape, n, maxConcurrent = 8, warmup = 1 }) {
    const readFiles = native.binding?.readFiles;
    check(readFiles !== undefined, 'warm-paired needs the native module (its floor is the native batch reader)');
    const graph = generate(shape, n);
    const s = scratch('warm-paired');
    const first = specsFor(graph, 'all', 'warm');
    ran(await runner(new LocalStore(), s.dir, maxConcurrent).run(first.list, { handleSigint: false }), n, 'succeeded');
    const steps = readdirSync(s.dir).filter((d) => !d.startsWith('.'));
    const floor = async () => {
      let next = 0;
      let read = 0;
      const lane = async () => {
        while (next < steps.length) {
          const names = steps.slice(next, (next += 512)).join('\0');
          const r = await readFiles(s.dir, names, '/.executor_status', true, 'SUCCESS', '/.artifact.json');
          for (let i = 1; i < r.errors.length; i += 2) if (r.errors[i] === 0) read++;
        }
      };
      const ms = await timeAsync(() => Promise.all(Array.from({ length: availableParallelism() }, lane)));
      check(read === n, `the floor read ${read} records of ${n}`);
      return ms;
    };
    const record = pairing(warmup);
    const once = async () => {
      const floorMs = await floor();
      const { list } = specsFor(graph, 'all', 'warm');
      const r = runner(new LocalStore(), s.dir, maxConcurrent);
      let summary;
      const ms = await timeAsync(async () => {
        summary = await r.run(list, { handleSigint: false });
      });
      check((summary.counts.succeeded ?? 0) === 0, `a warm rerun ran nothing (${JSON.stringify(summary.counts)})`);
      return record(floorMs, ms);
    };
    once.cleanup = s.remove;
    return once;
  },

  /**
   * Rerun of built `apply` steps (one cold run first, untimed): the handles are made fresh for each
   * repetition and lowered by the run, as a user's rerun does. `targets`: 'all' (every status and
   * record read) or 'sinks' (the terminal layer: content addressing reads nothing upstream).
   * `layout: 'versioned'` puts every step at a fixed path, where drift is checked.
   */
  async 'warm-apply'({ shape, n, targets = 'all', layout = 'content', maxConcurrent = 8 }) {
    const graph = generate(shape, n);
    const s = scratch('warm-apply');
    const handlesFor = (which) => {
      const handles = toHandles(core, graph);
      return which === 'all' ? handles : [...sinks(graph)].map((i) => handles[i]);
    };
    const make = () => new StepRunner({ prefix: s.dir, store: new LocalStore(), logger: quiet, maxConcurrent, layout });
    const setup = await make().run(handlesFor('all'), { handleSigint: false });
    ran(setup, n, 'succeeded');
    const once = async () => {
      const list = handlesFor(targets);
      const r = make();
      let summary;
      const ms = await timeAsync(async () => {
        summary = await r.run(list, { handleSigint: false });
      });
      check((summary.counts.succeeded ?? 0) === 0 && (summary.counts.failed ?? 0) === 0, `a warm rerun ran nothing (${JSON.stringify(summary.counts)})`);
      return ms;
    };
    once.cleanup = s.remove;
    return once;
  },

  /**
   * A realistic pipeline: `apply` steps lowered from handles; each reads its dependencies'
   * `data.txt` and writes its own (a few hundred bytes), on the local-disk store.
   */
  async files({ shape, n, maxConcurrent = 8, io = 'sync' }) {
    const graph = generate(shape, n);
    const step =
      io === 'sync'
        ? ({ i, deps, out }) => {
            let text = `step ${i}\n`;
            for (const d of deps) text += readFileSync(join(d, 'data.txt'), 'utf8').slice(0, 64);
            writeFileSync(join(out, 'data.txt'), text);
            return text.length;
          }
        : async ({ i, deps, out }) => {
            let text = `step ${i}\n`;
            for (const d of deps) text += (await readFile(join(d, 'data.txt'), 'utf8')).slice(0, 64);
            await writeFile(join(out, 'data.txt'), text);
            return text.length;
          };
    const handles = toHandles(core, graph, step);
    const targets = [...sinks(graph)].map((i) => handles[i]);
    return async () => {
      const s = scratch('files');
      try {
        const r = runner(new LocalStore({ io }), s.dir, maxConcurrent);
        let summary;
        const ms = await timeAsync(async () => {
          summary = await r.run(core.lower(targets), { handleSigint: false });
        });
        ran(summary, n, 'succeeded');
        return ms;
      } finally {
        s.remove();
      }
    };
  },

  /**
   * The files row paired with its floor (store.mjs `filesFloorSync`: the store floor's file
   * operations and each step's own reads and write, by hand): each repetition times the floor,
   * then the runner, on fresh directories of the same disk, as `cold-paired` does. Reports the
   * runner's time and, as metrics, the floor's median and the median per-pair ratio (warm-up
   * pairs excluded). An absolute target below the floor is not reachable on that machine.
   */
  async 'files-paired'({ shape, n, maxConcurrent = 8, warmup = 1 }) {
    const graph = generate(shape, n);
    const step = ({ i, deps, out }) => {
      let text = `step ${i}\n`;
      for (const d of deps) text += readFileSync(join(d, 'data.txt'), 'utf8').slice(0, 64);
      writeFileSync(join(out, 'data.txt'), text);
      return text.length;
    };
    const handles = toHandles(core, graph, step);
    const targets = [...sinks(graph)].map((i) => handles[i]);
    const record = pairing(warmup);
    return async () => {
      const f = scratch('files-floor');
      let floorMs;
      try {
        ({ ms: floorMs } = timeSync(() => filesFloorSync(f.dir, graph)));
      } finally {
        f.remove();
      }
      const s = scratch('files');
      try {
        const r = runner(new LocalStore({ io: 'sync' }), s.dir, maxConcurrent);
        let summary;
        const ms = await timeAsync(async () => {
          summary = await r.run(core.lower(targets), { handleSigint: false });
        });
        ran(summary, n, 'succeeded');
        return record(floorMs, ms);
      } finally {
        s.remove();
      }
    };
  },

  /**
   * Cold run of n `apply` handles of one graph, every handle given, with the in-memory store:
   * `from: 'array'` passes them as an array, `'generator'` yields them one at a time (as Marin's
   * StepRunner pulls steps). Handles are made fresh (untimed); lowering is timed with the run.
   */
  async stream({ shape, n, from = 'generator', maxConcurrent = 8 }) {
    const graph = generate(shape, n);
    return async () => {
      const handles = toHandles(core, graph);
      const steps =
        from === 'array'
          ? handles
          : (function* () {
              for (const h of handles) yield h;
            })();
      const r = runner(new MemoryStore(), '/bench', maxConcurrent);
      let summary;
      const ms = await timeAsync(async () => {
        summary = await r.run(steps, { handleSigint: false });
      });
      ran(summary, n, 'succeeded');
      return ms;
    };
  },

  /**
   * A dry run (`StepRunner.plan`) of n `apply` handles on an empty LocalStore directory, the
   * terminal layer given (as Snakemake's rule `all`): lowering, discovery and a status read of
   * every step (all missing, all to run); nothing runs. The peer of `snakemake -n` (cases/python.mjs).
   */
  async plan({ shape, n }) {
    const graph = generate(shape, n);
    return async () => {
      const handles = toHandles(core, graph);
      const targets = [...sinks(graph)].map((i) => handles[i]);
      const s = scratch('plan');
      try {
        const r = new StepRunner({ prefix: s.dir, store: new LocalStore(), logger: quiet });
        let plan;
        const ms = await timeAsync(async () => {
          plan = await r.plan(targets);
        });
        check(plan.counts.run === n, `the plan should run all ${n} steps, got ${JSON.stringify(plan.counts)}`);
        return ms;
      } finally {
        s.remove();
      }
    };
  },

  /** p-graph 2.0 running the same graph of no-op promises (string ids), `concurrency` = the runner's maxConcurrent. */
  async 'p-graph'({ shape, n, maxConcurrent = 8 }) {
    const { PGraph } = require('p-graph');
    const graph = generate(shape, n);
    const edges = edgeList(graph, (i) => `n${i}`);
    return async () => {
      let done = 0;
      const nodes = new Map();
      for (let i = 0; i < n; i++) nodes.set(`n${i}`, { run: async () => void done++ });
      const ms = await timeAsync(() => new PGraph(nodes, edges).run({ concurrency: maxConcurrent }));
      check(done === n, 'p-graph ran every node');
      return ms;
    };
  },
};
