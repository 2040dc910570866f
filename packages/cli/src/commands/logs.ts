/** `cairn logs <step> [-f]`: a step's attempt logs from the store, optionally following a running step. */
import { existsSync, readdirSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { LocalStore } from '@cairn/runner';
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

const FOLLOW_POLL_MS = 200;

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

/** Reads what was appended to `file` since `offset`; returns the new offset. */
async function drain(file: string, offset: number, write: (chunk: Buffer) => void): Promise<number> {
  const handle = await open(file, 'r').catch(() => undefined);
  if (!handle) return offset;
  try {
    const buf = Buffer.alloc(64 * 1024);
    for (;;) {
      const { bytesRead } = await handle.read(buf, 0, buf.length, offset);
      if (bytesRead === 0) return offset;
      write(buf.subarray(0, bytesRead));
      offset += bytesRead;
    }
  } finally {
    await handle.close();
  }
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
  const write = (chunk: Buffer) => void ctx.stdout.write(chunk);
  if (!options.follow) {
    const files = store.attemptFiles(step.path, attempt);
    if (!existsSync(files.stdout) && !existsSync(files.stderr)) {
      throw usageError(`Step ${step.rel} has no logs for attempt ${attempt}.`, `Attempts with logs: ${onDisk.join(', ') || 'none'}.`);
    }
    await drain(files.stdout, 0, write);
    await drain(files.stderr, 0, write);
    return 0;
  }
  // Follow: poll the current attempt's files; move on to a newer attempt when one appears.
  const stop = new AbortController();
  const onInt = () => stop.abort();
  process.once('SIGINT', onInt);
  try {
    let offsets = { out: 0, err: 0 };
    for (;;) {
      // Read the lease before draining, so nothing written before it was released is missed.
      const running = (await store.readLease(step.path)) !== null;
      const files = store.attemptFiles(step.path, attempt);
      offsets = { out: await drain(files.stdout, offsets.out, write), err: await drain(files.stderr, offsets.err, write) };
      const newer = attemptsOnDisk(step.path).filter((n) => n > attempt!);
      if (newer.length > 0) {
        attempt = newer[0] as number;
        offsets = { out: 0, err: 0 };
        ctx.stdout.write(`--- attempt ${attempt} ---\n`);
        continue;
      }
      if (!running || stop.signal.aborted) break;
      await sleep(FOLLOW_POLL_MS, undefined, { signal: stop.signal }).catch(() => undefined);
    }
  } finally {
    process.off('SIGINT', onInt);
  }
  return 0;
}
