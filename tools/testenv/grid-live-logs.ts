/**
 * The live-logs case every grid scheduler runs (Slurm, Grid Engine), through a real StepRunner:
 * a step prints a line every 200 ms (`ticker` of grid-steps.mjs); its lines must be readable in
 * the files `cairn logs -f` and the progress view follow (the running attempt's log files: the
 * `running` event's `logs`, which the store's `attemptLogs` also names) while the scheduler still
 * lists the job as running, not only once it ends.
 */
import { StepSpec } from '@cairn/core';
import { StepRunner, tailLogs, type Executor } from '@cairn/runner';
import { expect } from 'vitest';
import { commandStepFor, GRID_STEPS } from './grid-jobs.js';

/** What the case needs from a scheduler's test. */
export interface LiveLogsCase {
  /** A fresh store prefix. */
  readonly prefix: string;
  /** The executor (not started: the runner starts and stops it). */
  readonly executor: Executor;
  /** Ids of the jobs the scheduler lists as running right now (`squeue -t RUNNING -o %A`, `qstat -s r`), an array by its job id. */
  runningJobs(): Promise<string[]>;
  /** Ticker steps run at once (2 with a packing executor: one array task runs both, one after the other). @default 1 */
  readonly steps?: number;
  /** The ticker is a command step: python3 run by the job script (grid-programs/step.py), not a Node function. @default false */
  readonly program?: boolean;
}

/** What was seen, for the test's log: each line's delay from its print to its read (ms). */
export interface LiveLogsSeen {
  readonly lagsMs: readonly number[];
}

/** Lines read (each checked against the scheduler right after it was read) before the case stops following. */
const CHECKED_LINES = 5;

/** Runs the case; fails the test when a line could not be read while its job was running. */
export async function checkLiveLogs(c: LiveLogsCase): Promise<LiveLogsSeen> {
  const at = Date.now();
  const steps = Array.from({ length: c.steps ?? 1 }, (_, i) =>
    c.program
      ? commandStepFor('ticker', { executor: c.executor.name, tag: `${at}-${i}` })
      : new StepSpec({ name: `ticker${i + 1}`, executor: c.executor.name, ref: { module: GRID_STEPS, export: 'ticker' }, hashAttrs: { at } }),
  );
  const runner = new StepRunner({ prefix: c.prefix, executors: [c.executor] });
  // The first step reported running (with its log files) is the one followed.
  const followed = new Promise<{ path: string; logs: { readonly stdout: string; readonly stderr: string } }>((resolve) =>
    runner.on((e) => {
      if (e.type === 'step' && e.state === 'running' && e.logs !== undefined) resolve({ path: e.path, logs: e.logs });
    }),
  );
  let finished = false;
  const run = runner.run(steps).finally(() => (finished = true));
  const { path, logs } = await followed;
  // `cairn logs -f` finds the same files through the store, once the job has started writing them.
  const deadline = Date.now() + 60_000;
  for (;;) {
    const attempt = (await runner.store.attemptLogs(path)).at(-1);
    if (attempt !== undefined || finished || Date.now() > deadline) {
      expect(attempt).toMatchObject({ running: true, stdout: logs.stdout });
      break;
    }
    await new Promise((r) => setTimeout(r, 100));
  }

  const lagsMs: number[] = [];
  const stop = new AbortController();
  for await (const line of tailLogs(logs, { follow: true, signal: stop.signal, isRunning: () => !finished, intervalMs: 100 })) {
    const m = /^tick (\d+) (\d+) (\S+)$/.exec(line);
    if (!m) continue;
    lagsMs.push(Date.now() - Number(m[2]));
    // The line is already read: the job must still be running now, so it was running when read.
    expect(await c.runningJobs(), `job ${m[3]} while reading ${JSON.stringify(line)}`).toContain(m[3]);
    expect(finished).toBe(false);
    if (lagsMs.length >= CHECKED_LINES) {
      stop.abort();
      break;
    }
  }
  expect(lagsMs.length).toBe(CHECKED_LINES);

  const summary = await run;
  expect('counts' in summary && summary.counts).toEqual({ succeeded: steps.length });
  // The whole log, committed with the output.
  const committed = (await runner.store.attemptLogs(path)).at(-1);
  expect(committed?.running).toBe(false);
  const all: string[] = [];
  for await (const line of tailLogs(committed as { stdout: string; stderr: string }, { follow: false, isRunning: () => false })) all.push(line);
  expect(all.filter((l) => l.startsWith('tick ')).length).toBe(40);
  return { lagsMs };
}
