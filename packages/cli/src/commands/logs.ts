/** `cairn logs <step> [-f]`: a step's attempt logs from the store, optionally following a running step. */
import { existsSync } from 'node:fs';
import { LocalStore, tailLogs, type AttemptLogs } from '@cairn/runner';
import { loadConfig, requirePrefix } from '../config.js';
import type { CliContext } from '../context.js';
import { usageError } from '../errors.js';
import { matchStored, scanStore, type StoredStep } from '../store-scan.js';

/** Options of `cairn logs`. */
export interface LogsCommandOptions {
  /** Keep printing while the step runs. */
  readonly follow?: boolean;
  /** Attempt number; default the last. */
  readonly attempt?: number;
  /** Store prefix. */
  readonly prefix?: string;
}

/** Finds exactly one stored step for `selector`, or throws a usage error that lists the candidates. */
export async function resolveStoredStep(prefix: string, selector: string): Promise<StoredStep> {
  const steps = await scanStore(prefix);
  const matches = matchStored(steps, selector);
  if (matches.length === 0) {
    throw usageError(`No step in ${prefix} matches "${selector}".`, 'Run `cairn status` to see the steps the store holds.');
  }
  if (matches.length > 1) {
    const list = matches.slice(0, 10).map((m) => m.record?.nameWithHash ?? m.rel);
    throw usageError(`"${selector}" matches ${matches.length} steps (${list.join(', ')}).`, 'Pass a longer nameWithHash prefix or the output path.');
  }
  return matches[0] as StoredStep;
}

/** Prints the logs; with `--follow`, keeps printing (including later attempts) until the step's lease is released. */
export async function logsCommand(ctx: CliContext, selector: string, options: LogsCommandOptions): Promise<number> {
  const config = await loadConfig({ config: ctx.configFile, prefix: options.prefix }, ctx.env, ctx.cwd);
  const prefix = requirePrefix(config);
  const step = await resolveStoredStep(prefix, selector);
  const store = new LocalStore();
  const logsOf = async (n: number | undefined): Promise<AttemptLogs | undefined> => {
    const all = await store.attemptLogs(step.path);
    // A running attempt's logs are in its staged directory; after the commit, in the output's.
    return n === undefined ? all.at(-1) : (all.filter((a) => a.attempt === n).find((a) => a.running) ?? all.find((a) => a.attempt === n));
  };
  const onDisk = [...new Set((await store.attemptLogs(step.path)).map((a) => a.attempt))];
  let attempt = options.attempt ?? (await logsOf(undefined))?.attempt ?? step.record?.attempts.at(-1)?.attempt;
  if (attempt === undefined) {
    if (!options.follow) {
      ctx.stderr.write(`${step.rel}: no logs yet.\n`);
      return 0;
    }
    attempt = 1;
  }
  const seen = { stdout: 0, stderr: 0 };
  const print = async (lines: AsyncIterable<string>) => {
    for await (const line of lines) ctx.stdout.write(`${line}\n`);
  };
  if (!options.follow) {
    const files = await logsOf(attempt);
    if (files === undefined || (!existsSync(files.stdout) && !existsSync(files.stderr))) {
      throw usageError(`Step ${step.rel} has no logs for attempt ${attempt}.`, `Attempts with logs: ${onDisk.join(', ') || 'none'}.`);
    }
    await print(tailLogs(files, { follow: false, isRunning: () => false }));
    return 0;
  }
  // Follow the current attempt while the step's lease is held; move on when a newer attempt appears,
  // and to the committed copy of the same log when the attempt is published.
  const stop = new AbortController();
  const onInt = () => stop.abort();
  process.once('SIGINT', onInt);
  try {
    for (;;) {
      const current = attempt;
      const files = (await logsOf(current)) ?? { attempt: current, stdout: '', stderr: '', running: true };
      let newer: number | undefined;
      let moved = false;
      const isRunning = async () => {
        const all = await store.attemptLogs(step.path);
        newer = all.map((a) => a.attempt).find((n) => n > current);
        moved = files.running && !existsSync(files.stdout) && !existsSync(files.stderr) && all.some((a) => a.attempt === current && !a.running);
        return newer === undefined && !moved && (await store.readLease(step.path)) !== null;
      };
      await print(tailLogs(files, { follow: true, signal: stop.signal, isRunning, position: seen }));
      if (stop.signal.aborted) break;
      if (moved) continue;
      if (newer === undefined) break;
      attempt = newer;
      seen.stdout = seen.stderr = 0;
      ctx.stdout.write(`--- attempt ${attempt} ---\n`);
    }
  } finally {
    process.off('SIGINT', onInt);
  }
  return 0;
}
