/**
 * For grid-executor tests (Slurm, Grid Engine, the pack worker): JobRequests built from fixture
 * steps, and a host that records what an executor reports.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { command, lower, makeTask, OUT, StepSpec, type Resources } from '@cairn/core';
import type { ExecutorHost, JobRequest, JobStatus } from '@cairn/runner/executor';

/** `file://` URL of the shared fixture steps (tools/testenv/grid-steps.mjs). */
export const GRID_STEPS = new URL('./grid-steps.mjs', import.meta.url).href;

/** The runner's worker entry, built (`npx tsup` in packages/runner); override with CAIRN_WORKER_ENTRY. */
export function workerEntry(): string {
  return process.env.CAIRN_WORKER_ENTRY ?? fileURLToPath(new URL('../../packages/runner/dist/worker-entry.js', import.meta.url));
}

let counter = 0;

/** Options of {@link jobFor}. */
export interface JobForOptions {
  readonly resources?: Resources;
  readonly tag?: string;
  readonly signal?: AbortSignal;
  /** Module of the step functions. @default GRID_STEPS */
  readonly steps?: string;
}

/** A JobRequest for `exportName` of the fixtures, with fresh directories under `root`. */
export function jobFor(root: string, exportName: string, options: JobForOptions = {}): JobRequest {
  const n = ++counter;
  const spec = new StepSpec({
    name: `${exportName}${n}`,
    ref: { module: options.steps ?? GRID_STEPS, export: exportName },
    hashAttrs: { n, tag: options.tag ?? '' },
    resources: options.resources,
  });
  return requestFor(root, spec, options.signal);
}

/** The project directory of the command-step fixtures (`step.py`, run by real python3). */
export const GRID_PROGRAMS = fileURLToPath(new URL('./grid-programs/', import.meta.url));

/** The repository's Python helper (`cairn_step`), on the programs' PYTHONPATH. */
export const PYTHON_HELPER = fileURLToPath(new URL('../../python', import.meta.url));

/** Modes of `grid-programs/step.py`. */
export type ProgramMode = 'ok' | 'fail' | 'sleepy' | 'nap' | 'ticker';

/** A command step running `python3 step.py <mode> <OUT>` (a declared source) in grid-programs/. */
export function commandStepFor(mode: ProgramMode, options: { readonly resources?: Resources; readonly tag?: string; readonly executor?: string } = {}): StepSpec {
  const n = ++counter;
  const step = command({
    name: `py-${mode}${n}`,
    version: 'v1',
    program: 'python3',
    args: ['step.py', mode, OUT],
    inputs: { n, tag: options.tag ?? '' },
    sources: ['step.py'],
    dir: GRID_PROGRAMS,
    env: { PYTHONPATH: PYTHON_HELPER },
    killGraceMs: 500,
    ...(options.executor !== undefined ? { executor: options.executor } : {}),
    ...(options.resources !== undefined ? { resources: options.resources } : {}),
  });
  return lower(step);
}

/** A JobRequest for a command step ({@link commandStepFor}), with fresh directories under `root`. */
export function commandJobFor(root: string, mode: ProgramMode, options: Omit<JobForOptions, 'steps'> = {}): JobRequest {
  return requestFor(root, commandStepFor(mode, options), options.signal);
}

function requestFor(root: string, spec: StepSpec, signal: AbortSignal | undefined): JobRequest {
  const outputPath = join(root, 'store', spec.nameWithHash);
  const attemptDir = join(root, 'attempts', `${spec.nameWithHash}.1`);
  const task = makeTask(spec, { outputPath, depPaths: {}, attempt: 1, resources: spec.resources ?? {} });
  return {
    jobKey: `${spec.nameWithHash}.1`,
    spec,
    task,
    outputPath,
    resources: spec.resources ?? {},
    logPaths: { stdout: join(attemptDir, 'stdout.log'), stderr: join(attemptDir, 'stderr.log') },
    attemptDir,
    finalPath: outputPath,
    signal: signal ?? new AbortController().signal,
  };
}

/** A host that records reports and lets tests wait for a terminal one. */
export class RecordingHost implements ExecutorHost {
  readonly prefix: string;
  readonly client = undefined;
  readonly reports = new Map<string, JobStatus[]>();
  readonly warnings: string[] = [];
  readonly logger = { info: () => undefined, warn: (m: string) => void this.warnings.push(m), error: (m: string) => void this.warnings.push(m) };
  private readonly waiters = new Map<string, ((s: JobStatus) => void)[]>();

  constructor(prefix: string) {
    this.prefix = prefix;
  }

  report(jobId: string, status: JobStatus): void {
    const list = this.reports.get(jobId) ?? [];
    list.push(status);
    this.reports.set(jobId, list);
    if (['succeeded', 'failed', 'cancelled', 'lost'].includes(status.state)) {
      for (const w of this.waiters.get(jobId) ?? []) w(status);
      this.waiters.delete(jobId);
    }
  }

  /** Resolves with the job's terminal status (rejects after `timeoutMs`). */
  final(jobId: string, timeoutMs = 60_000): Promise<JobStatus> {
    const done = this.reports.get(jobId)?.find((s) => ['succeeded', 'failed', 'cancelled', 'lost'].includes(s.state));
    if (done) return Promise.resolve(done);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`job ${jobId}: no terminal report within ${timeoutMs} ms; got ${JSON.stringify(this.reports.get(jobId) ?? [])}`)), timeoutMs);
      const list = this.waiters.get(jobId) ?? [];
      list.push((s) => {
        clearTimeout(timer);
        resolve(s);
      });
      this.waiters.set(jobId, list);
    });
  }

  /** Resolves once the job has been reported `running`. */
  async running(jobId: string, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.reports.get(jobId)?.some((s) => s.state === 'running')) {
      if (Date.now() > deadline) throw new Error(`job ${jobId} never reported running: ${JSON.stringify(this.reports.get(jobId) ?? [])}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** A fresh temp directory. */
export function tempRoot(prefix = 'cairn-grid-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/**
 * Sizes of the big grid tests (a RELIABILITY_SCALE-style knob): `GRID_SCALE=quick` runs 200
 * packed steps instead of 1,000 (the size, the default).
 */
export function gridScale(): { readonly packedSteps: number } {
  return { packedSteps: process.env.GRID_SCALE === 'quick' ? 200 : 1000 };
}
