/**
 * Runner child processes (fixtures/pipeline-runner.mjs) and what they leave in the store.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url));

/** Configuration of one pipeline-runner child (see the fixture's header). */
export interface PipelineConfig {
  work: string;
  n: number;
  seed: number;
  pauseMs: number;
  ssh: Record<string, unknown> | null;
  select: { mod: number; skip: number } | null;
  maxConcurrent?: number;
}

/** A running child. */
export interface RunnerChild {
  readonly proc: ChildProcess;
  /** Steps it started (`R` lines) so far. */
  started(): number;
  /** Everything it printed. */
  output(): string;
  /** Resolves when `started()` reaches `n` or the child exits, whichever is first. */
  whenStarted(n: number): Promise<void>;
  /** Exit code, signal, the DONE/FAIL line and all output. */
  readonly done: Promise<{ code: number | null; signal: NodeJS.Signals | null; result: string; output: string }>;
}

/** Starts `node fixtures/pipeline-runner.mjs CONFIG`. */
export function startRunner(config: PipelineConfig): RunnerChild {
  const proc = spawn(process.execPath, [join(FIXTURES, 'pipeline-runner.mjs'), JSON.stringify(config)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let started = 0;
  let pending = '';
  const waiters: { n: number; resolve: () => void }[] = [];
  const wake = () => {
    for (const w of waiters.splice(0)) {
      if (started >= w.n || proc.exitCode !== null || proc.signalCode !== null) w.resolve();
      else waiters.push(w);
    }
  };
  proc.stdout?.on('data', (d: Buffer) => {
    const text = d.toString('utf8');
    out += text;
    pending += text;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const l of lines) if (l.startsWith('R ')) started++;
    wake();
  });
  proc.stderr?.on('data', (d: Buffer) => {
    out += d.toString('utf8');
  });
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; result: string; output: string }>((resolve) =>
    proc.on('exit', (code, signal) => {
      for (const w of waiters.splice(0)) w.resolve();
      const result = out.split('\n').find((l) => l.startsWith('DONE ') || l.startsWith('FAIL ')) ?? '';
      resolve({ code, signal, result, output: out });
    }),
  );
  return {
    proc,
    started: () => started,
    output: () => out,
    whenStarted: (n) => new Promise<void>((resolve) => {
      waiters.push({ n, resolve });
      wake();
    }),
    done,
  };
}

/** A scratch directory everyone (the SSH test user too) can write into. */
export function scratchDir(prefix: string): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  chmodSync(dir, 0o777);
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

const readOr = (file: string): string | null => {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
};

/** One step directory of a store. */
export interface StepDir {
  readonly nameWithHash: string;
  readonly status: string | null;
  readonly data: string | null;
  readonly record: string | null;
}

/** Every step directory under `<work>/store`. */
export function scanStore(work: string): Map<string, StepDir> {
  const store = join(work, 'store');
  const out = new Map<string, StepDir>();
  if (!existsSync(store)) return out;
  for (const d of readdirSync(store)) {
    // Not steps: the store marker (.cairn) and what the store keeps beside outputs (leases, checkpoints).
    if (d.startsWith('.')) continue;
    const dir = join(store, d);
    out.set(d, { nameWithHash: d, status: readOr(join(dir, '.executor_status')), data: readOr(join(dir, 'data')), record: readOr(join(dir, '.artifact.json')) });
  }
  return out;
}

/** Executions counted per step name (lines of `<work>/counts/<name>`). */
export function counts(work: string): Map<string, number> {
  const dir = join(work, 'counts');
  const out = new Map<string, number>();
  if (!existsSync(dir)) return out;
  for (const f of readdirSync(dir)) out.set(f, (readOr(join(dir, f)) ?? '').split('\n').filter(Boolean).length);
  return out;
}

/** `[name, nameWithHash, executor]` of the pipeline, as the child wrote it. */
export function manifest(work: string): [string, string, string][] {
  const file = readdirSync(work).find((f) => f.startsWith('manifest-'));
  if (!file) throw new Error(`no manifest in ${work}`);
  return JSON.parse(readFileSync(join(work, file), 'utf8')) as [string, string, string][];
}

/** Pids of live processes whose command line mentions `needle` (orphaned workers of a killed runner). */
export function processesMentioning(needle: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    const cmd = readOr(`/proc/${entry}/cmdline`);
    if (cmd?.includes(needle)) pids.push(Number(entry));
  }
  return pids;
}
