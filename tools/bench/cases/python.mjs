// Python orchestrators on the benchmark graphs, from the venv that tools/bench/python/setup.sh
// makes (.venv-bench; run.mjs calls it once per run when a Python row is planned). A missing venv
// fails the row with setup.sh's reason: the table reports it and the suite goes on.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generate, sinks } from '../generators.mjs';
import { scratch } from '../lib/tmp.mjs';
import { check, timeChildSync } from '../lib/timing.mjs';

const here = fileURLToPath(new URL('../python/', import.meta.url));
const venv = process.env.CAIRN_BENCH_VENV ?? fileURLToPath(new URL('../../../.venv-bench', import.meta.url));
const bin = (name) => join(venv, 'bin', name);

function needVenv() {
  if (!existsSync(bin('python'))) throw new Error(`no Python peers: ${venv} is missing (tools/bench/python/setup.sh makes it)`);
}

/** The graph as JSON (CSR plus its sinks) in `dir`. */
function writeGraph(dir, graph) {
  const file = join(dir, 'graph.json');
  writeFileSync(file, JSON.stringify({ n: graph.n, offsets: Array.from(graph.offsets), deps: Array.from(graph.deps), sinks: [...sinks(graph)] }));
  return file;
}

export const variants = {
  /**
   * `snakemake -n` (a dry run: parse, build the DAG of n jobs, list them; nothing runs) of one
   * wildcard rule over the graph, in an empty directory (every job needed). The whole process is
   * timed, as a user waits for it: Python's start and Snakemake's import (~1 s) included.
   */
  async 'snakemake-dry'({ shape, n }) {
    needVenv();
    const graph = generate(shape, n);
    const s = scratch('snakemake');
    const file = writeGraph(s.dir, graph);
    mkdirSync(join(s.dir, 'work'));
    const args = ['-s', join(here, 'Snakefile'), '-d', join(s.dir, 'work'), '--config', `graph=${file}`, '-n', '--cores', '1', 'all'];
    const once = () => {
      let r;
      // With --cpu, Snakemake's own CPU time (it runs in one process), as the Cairn rows count theirs.
      const ms = timeChildSync(() => {
        r = spawnSync(bin('snakemake'), args, { encoding: 'utf8', maxBuffer: 1 << 30 });
      }).ms;
      check(r.status === 0, `snakemake -n exited ${r.status}: ${(r.stderr || r.stdout).slice(-2000)}`);
      // The job stats table ends with the total: every step plus the rule `all`.
      const total = /^total\s+(\d+)/m.exec(r.stdout + r.stderr);
      check(total !== null && Number(total[1]) === n + 1, `snakemake listed ${total?.[1]} jobs, expected ${n + 1}`);
      return ms;
    };
    once.cleanup = s.remove;
    return once;
  },

  /**
   * Dask's local threaded scheduler (`dask.threaded.get`, `num_workers` = the runner's
   * maxConcurrent) on the graph of no-op tasks, every key requested. One Python process does the
   * warm-up and the timed runs (timed inside Python, the task dict built untimed); each call of
   * `once` hands back the next of its samples.
   */
  async dask({ shape, n, maxConcurrent = 8, warmup = 1, runs = 3 }) {
    needVenv();
    const graph = generate(shape, n);
    const s = scratch('dask');
    const file = writeGraph(s.dir, graph);
    const r = spawnSync(bin('python'), [join(here, 'dask_run.py'), file, String(warmup), String(runs), String(maxConcurrent)], { encoding: 'utf8', maxBuffer: 1 << 26 });
    s.remove();
    check(r.status === 0, `dask_run.py exited ${r.status}: ${r.stderr.slice(-2000)}`);
    const { samples, buildMs } = JSON.parse(r.stdout.trim().split('\n').pop());
    // The child asks for warm-up + runs samples; the warm-ups were already discarded in Python.
    const queue = [...Array(warmup).fill(samples[0]), ...samples];
    const once = () => ({ ms: queue.shift(), daskBuildMs: buildMs });
    return once;
  },
};
