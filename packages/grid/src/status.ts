/**
 * Turns a {@link Verdict} into the `JobStatus` the runner gets: reads the worker's result, and
 * builds errors that name the step, the scheduler's job and the last lines of its log.
 */
import { readFile } from 'node:fs/promises';
import { CairnError, type CairnErrorCode } from '@cairn/core';
import { commandStatus } from './command-status.js';
import type { Verdict } from './decide.js';
import { logTail } from './logs.js';
import { decodeResult, rebuildError, type JobStatus } from './runner-api.js';
import type { SchedulerJobInfo } from './scheduler.js';
import type { Tracked } from './tracked.js';

/** What {@link statusOf} needs besides the verdict. */
export interface StatusContext {
  /** The scheduler's name for messages (`Slurm`). */
  readonly label: string;
  /** What the scheduler said, if anything. */
  readonly info: SchedulerJobInfo | undefined;
  /** The grace window for a missing result file has run out. */
  readonly graceExpired: boolean;
}

async function failure(job: Tracked, label: string, code: CairnErrorCode, what: string, extra: { retryable?: boolean } = {}): Promise<Error> {
  const tail = await logTail(job.logs);
  const where = job.pack ? `${label} job ${job.id} (packed, step ${job.pack.place.index + 1} of ${job.pack.place.size})` : `${label} job ${job.id}`;
  return new CairnError(code, `Step "${job.step}": ${where} ${what}.${tail ? `\nLast log lines:\n${tail}` : ` Logs: ${job.logs.stderr}`}`, {
    step: job.step,
    retryable: extra.retryable,
  });
}

function describe(reason: string): { what: string; code: CairnErrorCode } {
  if (reason === 'TIMEOUT') return { what: 'exceeded its time limit (TIMEOUT)', code: 'CAIRN_TIMEOUT' };
  if (reason === 'CANCELLED') return { what: 'was cancelled outside Cairn (CANCELLED)', code: 'CAIRN_CANCELLED' };
  return { what: `ended ${reason}`, code: 'CAIRN_REMOTE' };
}

/** The status to report, or `undefined` to look again at the next check (a result file lagging on a shared filesystem). */
export async function statusOf(job: Tracked, v: Verdict, ctx: StatusContext): Promise<JobStatus | undefined> {
  const { label, info } = ctx;
  switch (v.kind) {
    case 'wait':
      return undefined;
    case 'active':
      return { state: v.state };
    case 'ended': {
      const base = { exitCode: v.exitCode ?? null, reason: v.reason };
      if (v.state === 'cancelled') return { state: 'cancelled', ...base };
      if (v.state === 'preempted') {
        return { state: 'failed', ...base, preempted: true, error: await failure(job, label, 'CAIRN_PREEMPTED', `was preempted (${v.reason}); it is retried from preemptionRetries, resuming from its checkpoints`, { retryable: true }) };
      }
      if (v.state === 'lost') return { state: 'lost', ...base, infrastructure: true, error: await failure(job, label, 'CAIRN_REMOTE', `was lost (${v.reason})`, { retryable: true }) };
      const { what, code } = describe(v.reason);
      return { state: 'failed', ...base, error: await failure(job, label, code, v.exitCode === undefined ? what : `${what}, exit code ${v.exitCode}`) };
    }
    case 'result': {
      if (job.command !== undefined) return commandStatus(job, job.command, v.code, label);
      const bytes = await readFile(job.files.result).catch(() => undefined);
      if (bytes === undefined) {
        if (v.code === 0 && !ctx.graceExpired) return undefined; // the result may lag the exit file on a shared FS
        if (v.code === 0) return { state: 'lost', exitCode: 0, reason: 'result file missing', infrastructure: true, error: await failure(job, label, 'CAIRN_REMOTE', 'exited 0 but wrote no result') };
        const reason = info?.class === 'killed' && info.reason !== 'CANCELLED' ? (info.reason ?? info.state) : `exit code ${v.code}`;
        return { state: 'failed', exitCode: v.code, reason, error: await failure(job, label, 'CAIRN_REMOTE', `failed (${reason})`) };
      }
      let result;
      try {
        result = decodeResult(bytes);
      } catch (err) {
        return { state: 'failed', exitCode: v.code, reason: 'CAIRN_CODEC_CORRUPT', error: err };
      }
      if (result.ok) return { state: 'succeeded', result: result.result, exitCode: v.code };
      if (job.cancelRequested && result.error.code === 'CAIRN_CANCELLED') return { state: 'cancelled', exitCode: v.code, reason: 'CANCELLED' };
      return { state: 'failed', exitCode: v.code, reason: result.error.code ?? result.error.name, error: rebuildError(result.error, job.step) };
    }
  }
}
