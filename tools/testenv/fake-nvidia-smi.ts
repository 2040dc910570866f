/**
 * A fake `nvidia-smi` for the usage tests (no GPU here): a real executable script that answers
 * the two queries Cairn's usage sampler makes (packages/runner/src/usage/gpu.ts) with canned
 * CSV, listing as compute processes the real pids of every process whose command line holds
 * `marker` (found with `pgrep -f`), plus one process of someone else on another GPU.
 */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** What the fake reports. */
export interface FakeGpu {
  /** Processes whose command line contains this are reported as on GPU `GPU-fake-0`. */
  readonly marker: string;
  /** GPU memory each such process holds (MiB). */
  readonly usedMiB: number;
  /** Utilisation of `GPU-fake-0` (percent); `GPU-fake-1` (someone else's) reports 97. */
  readonly utilization: number;
}

/** Writes the fake into `dir/bin/nvidia-smi`; returns the directory to put first on PATH. */
export function writeFakeNvidiaSmi(dir: string, gpu: FakeGpu): string {
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  const file = join(bin, 'nvidia-smi');
  writeFileSync(
    file,
    `#!/bin/sh
# fake nvidia-smi (tools/testenv/fake-nvidia-smi.ts)
case "$*" in
  *--query-compute-apps=*)
    for p in $(pgrep -f '${gpu.marker}'); do echo "$p, ${gpu.usedMiB}, GPU-fake-0"; done
    echo "1, 30000, GPU-fake-1"
    ;;
  *--query-gpu=*)
    echo "GPU-fake-0, ${gpu.utilization}"
    echo "GPU-fake-1, 97"
    ;;
  *) echo "fake nvidia-smi: unsupported arguments: $*" >&2; exit 2 ;;
esac
`,
  );
  chmodSync(file, 0o755);
  return bin;
}
