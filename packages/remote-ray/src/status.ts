/**
 * A Ray job's {@link RayVerdict} → the step's JobStatus. For an entrypoint that ended, the worker's
 * result file is the truth about the step (it returned, threw, or was cancelled); without one the
 * exit code and the last lines of the step's stderr (and Ray's own message) are the failure report.
 * A command step's program is judged by command-status.ts (exit code, `$CAIRN_RESULT`).
 */
import { open, readFile } from 'node:fs/promises';
import { CairnError } from '@cairn/core';
import { decodeResult, rebuildError, type JobStatus } from './runner-api.js';
import type { RayVerdict } from './states.js';
import { commandOutcome } from './command-status.js';

/** Bytes of stderr quoted when a job ends without a result. */
const TAIL_BYTES = 2048;

/** What status.ts needs to know of a job. */
export interface JobFacts {
  /** The step's name. */
  readonly step: string;
  /** The Ray submission id. */
  readonly id: string;
  /** The worker's result file (`undefined`: the exit code decides). */
  readonly resultPath?: string | undefined;
  /** The step's stderr log. */
  readonly stderr?: string | undefined;
  /** A command step's program (`resultPath` is then its JSON result file): see command-status.ts. */
  readonly program?: string | undefined;
  /** The attempt's log files (a command step's metadata is logged to its stdout). */
  readonly logPaths?: { readonly stdout: string; readonly stderr: string } | undefined;
  /** Ray's message about the job. */
  readonly message?: string | null | undefined;
  /** The step's secret values, masked in what the executor writes to the log. */
  readonly secrets?: Readonly<Record<string, string>> | undefined;
}

/** The last `bytes` of a file, trimmed; '' when it cannot be read. */
export async function readTail(path: string | undefined, bytes = TAIL_BYTES): Promise<string> {
  if (!path) return '';
  const handle = await open(path, 'r').catch(() => undefined);
  if (!handle) return '';
  try {
    const { size } = await handle.stat();
    const start = Math.max(0, size - bytes);
    const buf = Buffer.alloc(size - start);
    await handle.read(buf, 0, buf.length, start);
    return buf.toString('utf8').trim();
  } finally {
    await handle.close();
  }
}

/** The job's status, or `undefined` while it has not ended (queued, running). */
export async function statusOf(verdict: RayVerdict, job: JobFacts): Promise<JobStatus> {
  switch (verdict.kind) {
    case 'queued':
    case 'running':
      return { state: verdict.kind };
    case 'stopped':
      return { state: 'cancelled', reason: verdict.reason };
    case 'infrastructure':
    case 'failed': {
      const error = new CairnError('CAIRN_REMOTE', `Step "${job.step}": Ray could not run job ${job.id} (${verdict.reason}). ${verdict.message}`.trim(), { step: job.step, retryable: verdict.kind === 'infrastructure' });
      return verdict.kind === 'infrastructure' ? { state: 'lost', error, reason: verdict.reason, infrastructure: true } : { state: 'failed', error, reason: verdict.reason };
    }
    case 'ended':
      break;
  }
  const exitCode = verdict.exitCode;
  if (job.program !== undefined && job.resultPath) {
    return commandOutcome(exitCode, { step: job.step, id: job.id, program: job.program, resultPath: job.resultPath, logPaths: job.logPaths, message: job.message, secrets: job.secrets });
  }
  if (job.resultPath) {
    const bytes = await readFile(job.resultPath).catch(() => undefined);
    if (bytes) {
      const result = decodeResult(bytes);
      if (result.ok) return { state: 'succeeded', result: result.result, exitCode };
      if (result.error.code === 'CAIRN_CANCELLED') return { state: 'cancelled', reason: 'CAIRN_CANCELLED', exitCode };
      return { state: 'failed', error: rebuildError(result.error, job.step), exitCode, reason: result.error.code ?? result.error.name };
    }
  }
  if (exitCode === 0 && !job.resultPath) return { state: 'succeeded', exitCode };
  const tail = (await readTail(job.stderr)) || lastLines(job.message ?? '', 20);
  const how = exitCode === 0 ? 'exited 0 without writing a result' : `exited with code ${String(exitCode)}${job.resultPath ? ' without writing a result' : ''}`;
  const error = new CairnError('CAIRN_EXECUTOR', `Step "${job.step}": its Ray job ${job.id} ${how}.${tail ? `\nstderr (tail):\n${tail}` : ''}`, { step: job.step });
  return { state: 'failed', error, exitCode, reason: `exit code ${String(exitCode)}` };
}

function lastLines(text: string, n: number): string {
  return text.trim().split('\n').slice(-n).join('\n');
}
