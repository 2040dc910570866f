import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { makeTask, StepSpec, type Resources } from '@cairn/core';
import type { ExecutorHost, JobRequest, JobStatus } from '@cairn/runner/executor';
import { sshdOrSkip as sshdOrSkipFor, startSshd, testHostOptions, type SshdInstance } from '../../../tools/testenv/sshd.js';
import type { SshHostOptions } from '../src/index.js';

export const FIXTURES = pathToFileURL(join(import.meta.dirname, 'fixtures', 'steps.mjs')).href;

/** Tests need a real sshd (skipped with a message outside CI when it is missing). */
export const sshdOrSkip = (): boolean => sshdOrSkipFor('@cairn/remote-ssh tests');

/** Host options for a test sshd. */
export function hostOf(s: SshdInstance, name: string, extra: Partial<SshHostOptions> = {}): SshHostOptions {
  return testHostOptions(s, name, extra) as SshHostOptions;
}

export { startSshd, type SshdInstance };

/** Running (a zombie, left unreaped by a container's init, counts as dead). */
export function alive(pid: number): boolean {
  try {
    const state = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^\d+ \(.*\) /s, '')[0];
    return state !== 'Z';
  } catch {
    return false;
  }
}

/** Pids of persistent workers (`ssh-worker.mjs serve`), or of their relays (`connect`), running in a directory under one of `roots`. */
export function workerPids(roots: readonly string[], mode: 'serve' | 'connect' = 'serve'): number[] {
  const out: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      if (!readFileSync(`/proc/${e}/cmdline`, 'utf8').includes(`ssh-worker.mjs\0${mode}`) || !alive(Number(e))) continue;
      const cwd = readlinkSync(`/proc/${e}/cwd`);
      if (roots.some((r) => cwd.startsWith(`${r}/`))) out.push(Number(e));
    } catch {
      // gone
    }
  }
  return out;
}

/** Waits until `cond` holds (polling every 25 ms). */
export async function until(what: string, cond: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const scratchDirs: string[] = [];

/** Removes the scratch dirs made so far (call from afterAll). */
export function removeScratch(): void {
  for (const d of scratchDirs.splice(0)) rmSync(d, { recursive: true, force: true });
}

/** A local scratch dir the test user can write into; {@link removeScratch} removes it. */
export function scratch(prefix = 'cairn-ssh-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  chmodSync(dir, 0o777);
  scratchDirs.push(dir);
  return dir;
}

/** A fake ExecutorHost that records reports and lets tests await terminal states. */
export class Recorder implements ExecutorHost {
  readonly prefix: string;
  readonly client = undefined;
  readonly warnings: string[] = [];
  readonly logger = { info: () => {}, warn: (m: string) => void this.warnings.push(m), error: (m: string) => void this.warnings.push(m) };
  readonly statuses = new Map<string, JobStatus[]>();
  readonly #waiters = new Map<string, ((s: JobStatus) => void)[]>();

  constructor(prefix: string) {
    this.prefix = prefix;
  }

  report(jobId: string, status: JobStatus): void {
    this.statuses.set(jobId, [...(this.statuses.get(jobId) ?? []), status]);
    if (['succeeded', 'failed', 'cancelled', 'lost'].includes(status.state)) {
      for (const w of this.#waiters.get(jobId) ?? []) w(status);
      this.#waiters.delete(jobId);
    }
  }

  terminal(jobId: string): JobStatus | undefined {
    return this.statuses.get(jobId)?.find((s) => ['succeeded', 'failed', 'cancelled', 'lost'].includes(s.state));
  }

  /** Resolves with the job's terminal status. */
  done(jobId: string, timeoutMs = 20_000): Promise<JobStatus> {
    const t = this.terminal(jobId);
    if (t) return Promise.resolve(t);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`job ${jobId} did not finish in ${timeoutMs} ms; reports: ${JSON.stringify(this.statuses.get(jobId))}`)), timeoutMs);
      this.#waiters.set(jobId, [
        ...(this.#waiters.get(jobId) ?? []),
        (s) => {
          clearTimeout(timer);
          resolve(s);
        },
      ]);
    });
  }
}

let counter = 0;

/** A JobRequest for a fixture export, as the runner would build it. */
export function jobFor(
  prefix: string,
  exportName: string,
  opts: { name?: string; resources?: Resources; module?: string; depPaths?: Record<string, string>; deps?: StepSpec[]; outputPath?: string; signal?: AbortSignal } = {},
): JobRequest {
  const spec = new StepSpec({ name: opts.name ?? `${exportName}-${++counter}`, hashAttrs: { n: counter }, ref: { module: opts.module ?? FIXTURES, export: exportName }, resources: opts.resources, deps: opts.deps });
  return jobForSpec(prefix, spec, opts);
}

/** A JobRequest for attempt `attempt` of any lowered step, as the runner would build it. */
export function jobForSpec(prefix: string, spec: StepSpec, opts: { resources?: Resources; depPaths?: Record<string, string>; outputPath?: string; signal?: AbortSignal; attempt?: number } = {}): JobRequest {
  const attempt = opts.attempt ?? 1;
  const outputPath = opts.outputPath ?? join(prefix, spec.nameWithHash);
  const attemptDir = join(prefix, '.attempts', spec.nameWithHash);
  mkdirSync(attemptDir, { recursive: true });
  const task = makeTask(spec, { outputPath, depPaths: opts.depPaths ?? {}, attempt, resources: opts.resources });
  return {
    jobKey: `${spec.nameWithHash}.${attempt}`,
    spec,
    task,
    outputPath,
    resources: opts.resources ?? {},
    logPaths: { stdout: join(attemptDir, 'stdout.log'), stderr: join(attemptDir, 'stderr.log') },
    attemptDir,
    finalPath: outputPath,
    signal: opts.signal ?? new AbortController().signal,
  };
}
