"""Dask's local (threaded) scheduler on a benchmark graph of no-op tasks.

    python dask_run.py GRAPH.json WARMUP RUNS WORKERS

GRAPH.json holds the CSR graph of tools/bench/generators.mjs ({"n", "offsets", "deps"}). Task i
is `(noop, n<d>...)` over its dependencies; every key is requested, as p-graph runs every node.
Prints one JSON line: the build time of the task dict and each timed run's milliseconds.
"""
import json
import sys
import time

from dask.threaded import get


def noop(*_args):
    return None


def main():
    path, warmup, runs, workers = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    with open(path) as f:
        g = json.load(f)
    n, off, deps = g["n"], g["offsets"], g["deps"]
    t0 = time.perf_counter()
    dsk = {f"n{i}": (noop, *[f"n{d}" for d in deps[off[i]:off[i + 1]]]) for i in range(n)}
    keys = list(dsk)
    build_ms = (time.perf_counter() - t0) * 1000
    samples = []
    for k in range(warmup + runs):
        t = time.perf_counter()
        out = get(dsk, keys, num_workers=workers)
        ms = (time.perf_counter() - t) * 1000
        if len(out) != n:
            raise SystemExit(f"dask returned {len(out)} results for {n} keys")
        if k >= warmup:
            samples.append(ms)
    print(json.dumps({"buildMs": build_ms, "samples": samples}))


main()
