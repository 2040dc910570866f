"""A command step for the grid suites (tools/testenv/grid-suites.ts), run by real python3.

    python3 step.py <mode> <out>

ok: writes <out>/done.txt, prints to stdout and reports a result through cairn_step.
fail: prints 30 numbered lines and "disk on fire" to stderr, exits 3.
sleepy: starts `sleep 300` (a grandchild of the job), writes both pids to <out>/pids, sleeps.
nap: sleeps 2 s, then reports "napped".
ticker: prints `tick <i> <ms> <job id>` every 200 ms, 40 times (the live-logs case), then reports 40.
"""
import json
import os
import subprocess
import sys
import time

from cairn_step import context, report

mode, out = sys.argv[1], sys.argv[2]
ctx = context()
if mode == "ok":
    with open(os.path.join(out, "done.txt"), "w") as f:
        f.write("python ran %s\n" % ctx.step)
    print("py step ran in %s" % os.getcwd(), flush=True)
    report(
        {"answer": 42, "attempt": ctx.attempt, "out": ctx.output_path == out, "cuda": os.environ.get("CUDA_VISIBLE_DEVICES")},
        metadata={"mode": mode},
    )
elif mode == "fail":
    for i in range(30):
        print("noise %d" % i, file=sys.stderr)
    print("disk on fire", file=sys.stderr, flush=True)
    sys.exit(3)
elif mode == "sleepy":
    child = subprocess.Popen(["sleep", "300"])
    with open(os.path.join(out, "pids.tmp"), "w") as f:
        json.dump([os.getpid(), child.pid], f)
    os.replace(os.path.join(out, "pids.tmp"), os.path.join(out, "pids"))
    print("sleeping", flush=True)
    time.sleep(300)
elif mode == "nap":
    time.sleep(2)
    report("napped")
elif mode == "ticker":
    job = os.environ.get("SLURM_ARRAY_JOB_ID") or os.environ.get("SLURM_JOB_ID") or os.environ.get("JOB_ID")
    for i in range(1, 41):
        print("tick %d %d %s" % (i, int(time.time() * 1000), job), flush=True)
        time.sleep(0.2)
    report(40)
else:
    sys.exit("unknown mode %r" % mode)
