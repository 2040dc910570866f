/** Pieces shared by the local executors (threads, process). */
import { mkdirSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { StringDecoder } from 'node:string_decoder';
import { CairnError, isCairnError } from '@cairn/core';
import type { JobHandle, JobRequest, JobStatus } from '../executor/contract.js';
import { isCancelledResult, rebuildError, type WorkerResult } from '../worker/result.js';
import { Masker } from '../secrets/mask.js';

/** How often a followed log is re-read. */
const FOLLOW_INTERVAL_MS = 200;

/** The short `reason` of a cancelled job: the abort reason's Cairn code (`CAIRN_TIMEOUT`…), else `CAIRN_CANCELLED`. */
export function abortReasonCode(reason: unknown): string {
  return isCairnError(reason) ? reason.code : 'CAIRN_CANCELLED';
}

/** The error a worker is cancelled with: the abort reason when it is an Error, else `CAIRN_CANCELLED`. */
export function cancelError(reason: unknown, step: string): Error {
  return reason instanceof Error ? reason : new CairnError('CAIRN_CANCELLED', `Step "${step}" was cancelled.`, { step });
}

/**
 * The job status a worker result means. A cancelled job that still finished its step
 * reports `succeeded`; one that failed after a cancel request reports `cancelled`.
 */
export function statusOf(result: WorkerResult, step: string, cancelReason: unknown, exitCode?: number | null): JobStatus {
  if (result.ok) return { state: 'succeeded', result: result.result, ...(exitCode === undefined ? {} : { exitCode }) };
  if (cancelReason !== undefined || isCancelledResult(result)) {
    return { state: 'cancelled', reason: cancelReason === undefined ? 'CAIRN_CANCELLED' : abortReasonCode(cancelReason) };
  }
  return { state: 'failed', error: rebuildError(result.error, step), ...(exitCode === undefined ? {} : { exitCode }), reason: result.error.code ?? result.error.name };
}

/** Options of {@link tailLogs}. */
export interface TailLogsOptions {
  /** Keep reading while the job runs. */
  readonly follow: boolean;
  /** Stops following. */
  readonly signal?: AbortSignal | undefined;
  /** Whether the job still runs; asked before each pass, so the pass after it turns false drains the rest. */
  readonly isRunning: () => boolean | Promise<boolean>;
  /** Pause between passes that read nothing. @default 200 */
  readonly intervalMs?: number | undefined;
  /**
   * Where to start reading each file, kept up to date with what was yielded: hand the same object
   * to a second call to continue a log that moved (an attempt's log once its attempt is committed).
   * @default from the start
   */
  readonly position?: { stdout: number; stderr: number } | undefined;
  /**
   * Secret values to mask (`***`) in what is yielded, for a log read while its attempt runs
   * (secrets/live-mask.ts): a value split across two reads is masked whole, and a possible start
   * of a value at the very end is never yielded. @default none
   */
  readonly mask?: readonly string[] | undefined;
}

/**
 * Yields the lines of a job's stdout and stderr files (local or on a shared filesystem) as they
 * are read: each pass reads what stdout, then stderr, gained. With `follow`, keeps reading until
 * `isRunning()` turns false (then drains once more) or `signal` aborts. A last line without a
 * newline is yielded at the end.
 */
export async function* tailLogs(paths: { readonly stdout: string; readonly stderr: string }, options: TailLogsOptions): AsyncIterable<string> {
  const pos = options.position;
  const mask = options.mask !== undefined && options.mask.length > 0 ? options.mask : undefined;
  const files = (['stdout', 'stderr'] as const).map((which) => ({ which, path: paths[which], offset: pos?.[which] ?? 0, partial: '', decoder: new StringDecoder('utf8'), masker: mask === undefined ? undefined : new Masker(mask) }));
  for (;;) {
    const running = options.follow && !options.signal?.aborted && (await options.isRunning());
    let read = false;
    for (const f of files) {
      const handle = await open(f.path, 'r').catch(() => undefined);
      if (!handle) continue;
      try {
        const buf = Buffer.alloc(64 * 1024);
        for (;;) {
          const { bytesRead } = await handle.read(buf, 0, buf.length, f.offset);
          if (bytesRead === 0) break;
          read = true;
          f.offset += bytesRead;
          const chunk = buf.subarray(0, bytesRead);
          const lines = (f.partial + f.decoder.write(f.masker === undefined ? chunk : f.masker.push(chunk))).split('\n');
          f.partial = lines.pop() ?? '';
          if (pos !== undefined) pos[f.which] = f.offset - Buffer.byteLength(f.partial) - (f.masker?.held ?? 0);
          yield* lines;
        }
      } finally {
        await handle.close();
      }
    }
    if (!running || options.signal?.aborted) break;
    if (!read) {
      try {
        await sleep(options.intervalMs ?? FOLLOW_INTERVAL_MS, undefined, { signal: options.signal });
      } catch {
        break;
      }
    }
  }
  for (const f of files) {
    const rest = f.partial + f.decoder.end();
    // A masked log's held bytes (a possible start of a value) are not shown.
    if (pos !== undefined) pos[f.which] = f.offset - (f.masker?.held ?? 0);
    if (rest) yield rest;
  }
}

/** What the local executors keep about a running job. */
export interface LocalJob {
  readonly step: string;
  readonly logPaths: JobRequest['logPaths'];
}

/** The error a job is cancelled with by `cancel()` or `stop()`. */
export function cancelledBy(job: LocalJob, why: 'cancel' | 'stop'): CairnError {
  const tail = why === 'stop' ? ': the executor stopped' : '';
  return new CairnError('CAIRN_CANCELLED', `Step "${job.step}" was cancelled${tail}.`, { step: job.step });
}

/** `Executor.cancel` for a local executor: asks each of `handles` still in `active` to stop. */
export function cancelActive<J extends LocalJob>(active: ReadonlyMap<string, J>, handles: readonly JobHandle[], requestCancel: (job: J, reason: unknown) => void): void {
  for (const h of handles) {
    const job = active.get(h.jobId);
    if (job) requestCancel(job, cancelledBy(job, 'cancel'));
  }
}

/** Creates the directories of an attempt's log files, on the caller's stack (no await between a cancel check and the mkdir). */
export function ensureLogDirs(logPaths: JobRequest['logPaths']): void {
  mkdirSync(dirname(logPaths.stdout), { recursive: true });
  mkdirSync(dirname(logPaths.stderr), { recursive: true });
}


/** `Executor.logs` for a local executor: tails the files in `handle.info.logPaths` while the job is in `active`. */
export function localLogs(handle: JobHandle, options: { follow: boolean; signal?: AbortSignal | undefined }, active: ReadonlyMap<string, LocalJob>): AsyncIterable<string> {
  const paths = (handle.info.logPaths ?? active.get(handle.jobId)?.logPaths) as JobRequest['logPaths'] | undefined;
  if (!paths) throw new CairnError('CAIRN_EXECUTOR', `Job ${handle.jobId} has no log files recorded.`);
  return tailLogs(paths, { follow: options.follow, signal: options.signal, isRunning: () => active.has(handle.jobId) });
}
