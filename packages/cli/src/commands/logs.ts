/** `cairn logs <step> [-f]`: a step's attempt logs from the store, optionally following a running step. */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { LocalStore, tailLogs } from '@cairn/runner';
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

/** Attempt numbers that have log files, ascending. */
function attemptsOnDisk(path: string): number[] {
  const dir = join(path, '.cairn', 'logs');
  if (!existsSync(dir)) return [];
  const nums = new Set<number>();
  for (const f of readdirSync(dir)) {
    const m = /^attempt-(\d+)\.(stdout|stderr)$/.exec(f);
    if (m) nums.add(Number(m[1]));
  }
  return [...nums].sort((a, b) => a - b);
}

/** Prints the logs; with `--follow`, keeps printing (including later attempts) until the step's lease is released. */
export async function logsCommand(ctx: CliContext, selector: string, options: LogsCommandOptions): Promise<number> {
  const config = await loadConfig({ config: ctx.configFile, prefix: options.prefix }, ctx.env, ctx.cwd);
  const prefix = requirePrefix(config);
  const step = await resolveStoredStep(prefix, selector);
  const store = new LocalStore();
  const onDisk = attemptsOnDisk(step.path);
  let attempt = options.attempt ?? onDisk[onDisk.length - 1] ?? step.record?.attempts.at(-1)?.attempt;
  if (attempt === undefined) {
    if (!options.follow) {
      ctx.stderr.write(`${step.rel}: no logs yet.\n`);
      return 0;
    }
    attempt = 1;
  }
  const print = async (lines: AsyncIterable<string>) => {
    for await (const line of lines) ctx.stdout.write(`${line}\n`);
  };
  if (!options.follow) {
    const files = store.attemptFiles(step.path, attempt);
    if (!existsSync(files.stdout) && !existsSync(files.stderr)) {
      throw usageError(`Step ${step.rel} has no logs for attempt ${attempt}.`, `Attempts with logs: ${onDisk.join(', ') || 'none'}.`);
    }
    await print(tailLogs(files, { follow: false, isRunning: () => false }));
    return 0;
  }
  // Follow the current attempt while the step's lease is held; move on when a newer attempt appears.
  const stop = new AbortController();
  const onInt = () => stop.abort();
  process.once('SIGINT', onInt);
  try {
    for (;;) {
      const current = attempt;
      let newer: number | undefined;
      // Asked before each read, so the read after the lease is released drains what was written before.
      const isRunning = async () => {
        newer = attemptsOnDisk(step.path).find((n) => n > current);
        return newer === undefined && (await store.readLease(step.path)) !== null;
      };
      await print(tailLogs(store.attemptFiles(step.path, current), { follow: true, signal: stop.signal, isRunning }));
      if (newer === undefined || stop.signal.aborted) break;
      attempt = newer;
      ctx.stdout.write(`--- attempt ${attempt} ---\n`);
    }
  } finally {
    process.off('SIGINT', onInt);
  }
  return 0;
}
