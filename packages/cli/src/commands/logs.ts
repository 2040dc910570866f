/**
 * `cairn logs <step> [-f]`: a step's attempt logs from the store, optionally following a running
 * step; a failed attempt's logs end with its error and stack (also when it wrote no logs). A
 * running attempt of a step with secrets is shown with their values masked, or withheld when
 * this user's providers cannot resolve them (docs/secrets.md, "Reading a running log").
 */
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { LiveLogMasks, tailLogs, type AttemptLogs, type LiveLogView } from '@cairn/runner';
import { loadConfig, type EffectiveConfig } from '../config.js';
import type { CliContext } from '../context.js';
import { cliError } from '../errors.js';
import { loadPipeline } from '../pipeline.js';
import { otherBuildsLine, pickStoredStep } from '../step-pick.js';
import { matchStored, type StoredStep } from '../store-scan.js';
import { openStore, type StoreView } from '../store-view.js';

/** How often a withheld running attempt is checked for its end. */
const FOLLOW_POLL_MS = 500;

/** Options of `cairn logs`. */
export interface LogsCommandOptions {
  /** Keep printing while the step runs. */
  readonly follow?: boolean;
  /** Attempt number; default the last. */
  readonly attempt?: number;
  /** Store prefix. */
  readonly prefix?: string;
  /** The pipeline module: a name means the build it references now (default: the newest build). */
  readonly pipeline?: string;
}

/**
 * The stored build `selector` means ({@link pickStoredStep}): with `pipelineFile`, the build the
 * pipeline references now, else the newest; a line on stderr names the other builds and how to
 * pick one (`command`, e.g. `cairn logs`).
 */
export async function resolveStoredStep(ctx: CliContext, view: StoreView, selector: string, command: string, config: EffectiveConfig, pipelineFile?: string): Promise<StoredStep> {
  const steps = await view.scan();
  const current = new Set<string>();
  if (pipelineFile !== undefined) {
    const pipeline = await loadPipeline(pipelineFile, ctx.cwd, config.layout);
    for (const spec of pipeline.specs) current.add(spec.outputPath(view.prefix));
  }
  const picked = pickStoredStep(steps, selector, view.prefix, current);
  const line = otherBuildsLine(picked, command);
  if (line !== undefined) ctx.stderr.write(`${ctx.colors.dim(line)}\n`);
  return picked.step;
}

/**
 * The log files of attempt `n` of a step (the newest when `n` is undefined): a running attempt's
 * are in its staged directory beside the output path, a committed one's inside the output.
 */
async function logsOf(view: StoreView, step: StoredStep, n: number | undefined): Promise<AttemptLogs | undefined> {
  const all = await view.store.attemptLogs(step.path);
  if (n === undefined) return all.at(-1);
  return all.filter((a) => a.attempt === n).find((a) => a.running) ?? all.find((a) => a.attempt === n);
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
  const view = await openStore(config);
  const store = view.store;
  const step = await resolveStoredStep(ctx, view, selector, 'cairn logs', config, options.pipeline);
  const masks = new LiveLogMasks(config.secrets?.providers);
  /** How to show an attempt's files: a running one's masked or withheld when its step has secrets. */
  const liveView = (files: AttemptLogs): Promise<LiveLogView> => (files.running && files.stdout !== '' ? masks.viewOf(files, files.attempt) : Promise.resolve({ show: 'as-is' }));
  const onDisk = [...new Set((await store.attemptLogs(step.path)).map((a) => a.attempt))];
  let attempt = options.attempt ?? (await logsOf(view, step, undefined))?.attempt ?? step.record?.attempts.at(-1)?.attempt;
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
    const files = await logsOf(view, step, attempt);
    // Committed logs of a store that is not on this filesystem are read whole (they are finished).
    const remote = files !== undefined && !files.running && !view.local ? await remoteLogs(view, files) : undefined;
    const hasLogs = remote !== undefined ? remote.length > 0 : files !== undefined && (existsSync(files.stdout) || existsSync(files.stderr));
    const failure = failureLines(step, attempt);
    if (!hasLogs && failure.length === 0) {
      const known = step.record?.attempts.some((a) => a.attempt === attempt) === true;
      if (known) {
        ctx.stderr.write(`${step.rel}: attempt ${attempt} wrote no logs.\n`);
        return 0;
      }
      throw cliError('CAIRN_NO_LOGS', `Step ${step.rel} has no logs for attempt ${attempt}.`, `Attempts with logs: ${onDisk.join(', ') || 'none'}; recorded attempts: ${step.record?.attempts.map((a) => a.attempt).join(', ') || 'none'}.`);
    }
    const live = hasLogs && remote === undefined ? await liveView(files as AttemptLogs) : undefined;
    if (remote !== undefined && hasLogs) for (const line of remote) ctx.stdout.write(`${line}\n`);
    else if (live?.show === 'withheld') ctx.stdout.write(`${live.notice}\n`);
    else if (hasLogs) await print(tailLogs(files as AttemptLogs, { follow: false, isRunning: () => false, mask: live?.show === 'masked' ? live.values : undefined }));
    else ctx.stdout.write(`(attempt ${attempt} wrote no logs)\n`);
    printFailure(attempt);
    return 0;
  }
  attempt ??= 1;
  // Follow the current attempt while the step's lease is held; move on when a newer attempt
  // appears, and to the committed copy of the same log when the attempt is published.
  const stop = new AbortController();
  const onInt = () => stop.abort();
  process.once('SIGINT', onInt);
  const seen = { stdout: 0, stderr: 0 };
  try {
    for (;;) {
      const current = attempt;
      const files = (await logsOf(view, step, current)) ?? { attempt: current, stdout: '', stderr: '', running: true };
      if (!files.running && !view.local) {
        // Published to a store off this filesystem: the rest of it, past what was already printed.
        for (const [which, path] of [['stdout', files.stdout], ['stderr', files.stderr]] as const) {
          const text = Buffer.from((await view.readText(path)) ?? '').subarray(seen[which]).toString('utf8');
          if (text !== '') ctx.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
        }
        break;
      }
      let newer: number | undefined;
      let moved = false;
      // Asked before each read, so the read after the lease is released drains what was written before.
      const isRunning = async () => {
        const all = await store.attemptLogs(step.path);
        newer = all.map((a) => a.attempt).find((n) => n > current);
        moved = files.running && !existsSync(files.stdout) && !existsSync(files.stderr) && all.some((a) => a.attempt === current && !a.running);
        return newer === undefined && !moved && (await store.readLease(step.path)) !== null;
      };
      const live = await liveView(files);
      if (live.show === 'withheld') {
        // Nothing of it until the attempt ends and the runner has masked its logs.
        ctx.stdout.write(`${live.notice}\n`);
        while (!stop.signal.aborted && (await isRunning())) await sleep(FOLLOW_POLL_MS, undefined, { signal: stop.signal }).catch(() => undefined);
        if (!stop.signal.aborted && !moved && (await liveView(files)).show === 'as-is') await print(tailLogs(files, { follow: false, isRunning: () => false, position: seen }));
      } else await print(tailLogs(files, { follow: true, signal: stop.signal, isRunning, position: seen, mask: live.show === 'masked' ? live.values : undefined }));
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
  // The step ended: show how its last attempt failed, if it did (from the record it just wrote).
  if (!stop.signal.aborted) {
    const [after] = await scanOne(view, step);
    if (after !== undefined) for (const line of failureLines(after, attempt)) ctx.stdout.write(`${line}\n`);
  }
  return 0;
}

/** The step re-read from the store (after a followed attempt ended). */
async function scanOne(view: StoreView, step: StoredStep): Promise<StoredStep[]> {
  return matchStored(await view.scan(), step.rel).filter((s) => s.path === step.path);
}

/** The lines of a committed attempt's logs read from the store (stdout, then stderr, as `tailLogs` prints them). */
async function remoteLogs(view: StoreView, files: AttemptLogs): Promise<string[]> {
  const lines: string[] = [];
  for (const f of [files.stdout, files.stderr]) {
    const text = await view.readText(f);
    if (text !== null && text !== '') lines.push(...text.replace(/\n$/, '').split('\n'));
  }
  return lines;
}
