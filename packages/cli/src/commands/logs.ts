/**
 * `cairn logs <step> [-f]`: a step's attempt logs from the store, optionally following a running
 * step; a failed attempt's logs end with its error and stack (also when it wrote no logs).
 */
import { existsSync } from 'node:fs';
import { LocalStore, tailLogs } from '@cairn/runner';
import { loadConfig, requirePrefix } from '../config.js';
import type { CliContext } from '../context.js';
import { cliError } from '../errors.js';
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
    throw cliError('CAIRN_NO_SUCH_STEP', `No step in ${prefix} matches "${selector}".`, 'Run `cairn status` to see the steps the store holds.');
  }
  if (matches.length > 1) {
    const list = matches.slice(0, 10).map((m) => m.record?.nameWithHash ?? m.rel);
    throw cliError('CAIRN_AMBIGUOUS_STEP', `"${selector}" matches ${matches.length} steps (${list.join(', ')}).`, 'Pass a longer nameWithHash prefix or the output path.');
  }
  return matches[0] as StoredStep;
}

/** Attempts looked for beyond the recorded ones (a running step has no record of its current attempt yet). */
const PROBE_AHEAD = 8;

/** Attempt numbers that have log files, ascending (the store's `attemptFiles` say where they are). */
function attemptsOnDisk(store: LocalStore, step: StoredStep): number[] {
  const recorded = Math.max(0, ...(step.record?.attempts ?? []).map((a) => a.attempt));
  const nums: number[] = [];
  for (let n = 1; n <= recorded + PROBE_AHEAD; n++) {
    const f = store.attemptFiles(step.path, n);
    if (existsSync(f.stdout) || existsSync(f.stderr)) nums.push(n);
  }
  return nums;
}

/** The error block printed after a failed attempt's logs: what it failed with, and the stack. */
function failureLines(step: StoredStep, attempt: number): string[] {
  const r = step.record;
  const a = r?.attempts.find((x) => x.attempt === attempt);
  // The last attempt's error is the step's final error, which the record keeps with its stack.
  const error = a?.error ?? (r !== null && r.status !== 'SUCCESS' && (r.attempts.at(-1)?.attempt ?? attempt) === attempt ? r.error : undefined);
  if (error === undefined || a?.state === 'succeeded') return [];
  const how = a === undefined ? (r?.status ?? 'failed') : `${a.state} on ${a.executor} @ ${a.host}`;
  const text = error.stack ?? `${error.name}: ${error.message}`;
  return [`--- attempt ${attempt} ${how}${error.code ? ` [${error.code}]` : ''}: ${error.message.split('\n')[0] ?? ''}`, ...text.split('\n')];
}

/** Prints the logs; with `--follow`, keeps printing (including later attempts) until the step's lease is released. */
export async function logsCommand(ctx: CliContext, selector: string, options: LogsCommandOptions): Promise<number> {
  const config = await loadConfig({ config: ctx.configFile, prefix: options.prefix }, ctx.env, ctx.cwd);
  const prefix = requirePrefix(config);
  const step = await resolveStoredStep(prefix, selector);
  const store = new LocalStore();
  const onDisk = attemptsOnDisk(store, step);
  let attempt = options.attempt ?? onDisk[onDisk.length - 1] ?? step.record?.attempts.at(-1)?.attempt;
  const print = async (lines: AsyncIterable<string>) => {
    for await (const line of lines) ctx.stdout.write(`${line}\n`);
  };
  const printFailure = (n: number) => {
    for (const line of failureLines(step, n)) ctx.stdout.write(`${line}\n`);
  };
  if (!options.follow) {
    if (attempt === undefined) {
      // Never ran an attempt here: a dependency failed, or it was cancelled before it started.
      const e = step.record?.error;
      const why = e?.message ?? (step.status === 'DEP_FAILED' ? 'a dependency failed (`cairn status` shows which step failed)' : step.status === 'CANCELLED' ? 'it was cancelled before it started' : undefined);
      if (why !== undefined) ctx.stdout.write(`${step.rel} did not run (${step.status ?? 'no status'}): ${why}\n`);
      else ctx.stderr.write(`${step.rel}: no logs yet.\n`);
      return 0;
    }
    const files = store.attemptFiles(step.path, attempt);
    const hasLogs = existsSync(files.stdout) || existsSync(files.stderr);
    const failure = failureLines(step, attempt);
    if (!hasLogs && failure.length === 0) {
      const known = step.record?.attempts.some((a) => a.attempt === attempt) === true;
      if (known) {
        ctx.stderr.write(`${step.rel}: attempt ${attempt} wrote no logs.\n`);
        return 0;
      }
      throw cliError('CAIRN_NO_LOGS', `Step ${step.rel} has no logs for attempt ${attempt}.`, `Attempts with logs: ${onDisk.join(', ') || 'none'}; recorded attempts: ${step.record?.attempts.map((a) => a.attempt).join(', ') || 'none'}.`);
    }
    if (hasLogs) await print(tailLogs(files, { follow: false, isRunning: () => false }));
    else ctx.stdout.write(`(attempt ${attempt} wrote no logs)\n`);
    printFailure(attempt);
    return 0;
  }
  attempt ??= 1;
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
        const f = store.attemptFiles(step.path, current + 1);
        newer = existsSync(f.stdout) || existsSync(f.stderr) ? current + 1 : undefined;
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
  // The step ended: show how its last attempt failed, if it did (from the record it just wrote).
  if (!stop.signal.aborted) {
    const [after] = await scanOne(prefix, step);
    if (after !== undefined) for (const line of failureLines(after, attempt)) ctx.stdout.write(`${line}\n`);
  }
  return 0;
}

/** The step re-read from the store (after a followed attempt ended). */
async function scanOne(prefix: string, step: StoredStep): Promise<StoredStep[]> {
  return matchStored(await scanStore(prefix), step.rel).filter((s) => s.path === step.path);
}
