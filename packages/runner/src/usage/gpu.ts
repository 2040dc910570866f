/**
 * GPU use by process, from `nvidia-smi` where it is on the host's PATH (nothing is measured
 * otherwise): the memory each compute process holds on each GPU, and each GPU's utilisation.
 * Sampled with the process table (sampler.ts); a meter keeps what its attempt's processes use.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** One `nvidia-smi` sample. */
export interface GpuSample {
  /** GPU memory in use by each compute process (bytes) and the GPU it is on (its UUID). */
  readonly apps: readonly { readonly pid: number; readonly usedBytes: number; readonly gpu: string }[];
  /** Utilisation (percent, 0–100) of each GPU, by UUID. */
  readonly utilization: ReadonlyMap<string, number>;
}

/** Longest a query may take before the sample is dropped. */
const QUERY_TIMEOUT_MS = 5000;

/** The last {@link findNvidiaSmi} answer, for the `PATH` it searched. */
let found: { readonly path: string; readonly file: string | undefined } | undefined;

/**
 * `nvidia-smi`'s path on `PATH`, or undefined when there is none. The answer is kept while `PATH`
 * stays the same (every sample asks; bench row "local, 1 at a time" of command.bench.mjs): a
 * driver installed while the runner runs is seen by the next runner.
 */
export function findNvidiaSmi(path = process.env.PATH ?? ''): string | undefined {
  if (found?.path !== path) found = { path, file: searchPath(path) };
  return found.file;
}

function searchPath(path: string): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (dir === '') continue;
    const file = join(dir, 'nvidia-smi');
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return undefined;
}

function query(file: string, args: string[]): Promise<string[][]> {
  return new Promise((resolve, reject) => {
    execFile(file, [...args, '--format=csv,noheader,nounits'], { timeout: QUERY_TIMEOUT_MS }, (err, stdout) => {
      if (err) reject(err);
      else resolve(stdout.split('\n').filter((l) => l.trim() !== '').map((l) => l.split(',').map((c) => c.trim())));
    });
  });
}

/** Parses the two queries' rows (exported for its table test); rows that are not numbers (`[N/A]`) are skipped. */
export function parseGpuSample(appRows: readonly string[][], gpuRows: readonly string[][]): GpuSample {
  const apps = appRows.flatMap(([pid, mib, gpu]) => {
    const p = Number(pid);
    const m = Number(mib);
    return Number.isInteger(p) && Number.isFinite(m) ? [{ pid: p, usedBytes: m * 1024 * 1024, gpu: gpu ?? '' }] : [];
  });
  const utilization = new Map<string, number>();
  for (const [uuid, util] of gpuRows) if (uuid !== undefined && Number.isFinite(Number(util))) utilization.set(uuid, Number(util));
  return { apps, utilization };
}

/** One sample from `file` (an `nvidia-smi`); undefined when it fails (no driver, a hung GPU). */
export async function sampleGpus(file: string): Promise<GpuSample | undefined> {
  try {
    const [appRows, gpuRows] = await Promise.all([
      query(file, ['--query-compute-apps=pid,used_memory,gpu_uuid']),
      query(file, ['--query-gpu=uuid,utilization.gpu']),
    ]);
    return parseGpuSample(appRows, gpuRows);
  } catch {
    return undefined;
  }
}
