/**
 * How a command job that ran its program itself ended, from the files its wrapper and the
 * program left: the wrapper's `command-error` (it could not start the program), the exit code
 * (0 = success; anything else a failure naming the code or signal, with the last lines of the
 * program's stderr), and the result the program reported in `$CAIRN_RESULT`.
 */
import { appendFile, readFile } from 'node:fs/promises';
import { constants } from 'node:os';
import { CairnError, type CairnErrorCode } from '@cairn/core';
import { fileTail, maskText, parseReportedResult, type JobStatus } from './runner-api.js';
import type { CommandJob, Tracked } from './tracked.js';

/** The last lines of the attempt's stderr log (the attempt's own file: from its start). */
const stderrTail = (path: string): Promise<string> => fileTail(path, 0);

/** `exited with code 3`, or for 128+N `exited with code 137 (killed by SIGKILL)`. */
function how(code: number): string {
  const name = code > 128 ? Object.entries(constants.signals).find(([, n]) => n === code - 128)?.[0] : undefined;
  return `exited with code ${code}${name ? ` (killed by ${name})` : ''}`;
}

/** The step's status once its exit-code file says it exited with `code` (no wrapper signal). */
export async function commandStatus(job: Tracked, command: CommandJob, code: number, label: string): Promise<JobStatus> {
  const step = job.step;
  const program = command.program;
  const refused = await readFile(job.files.commandError, 'utf8').catch(() => undefined);
  if (refused !== undefined) {
    const tab = refused.indexOf('\t');
    const errCode = (tab > 0 ? refused.slice(0, tab) : 'CAIRN_COMMAND_FAILED') as CairnErrorCode;
    const message = tab > 0 ? refused.slice(tab + 1).trim() : refused.trim();
    return { state: 'failed', exitCode: code, reason: errCode, error: new CairnError(errCode, message, { step }) };
  }
  if (code !== 0 && command.preemptionExitCodes?.includes(code) === true) {
    const tail = await stderrTail(job.logs.stderr);
    const message = `Step "${step}": ${program} ${how(code)} (${label} job ${job.id}): preempted; it is retried from preemptionRetries, resuming from its checkpoints.${tail ? `\nstderr (last lines):\n${tail}` : ''}`;
    return { state: 'failed', exitCode: code, reason: 'preempted', preempted: true, error: new CairnError('CAIRN_PREEMPTED', message, { step, retryable: true }) };
  }
  if (code !== 0) {
    const tail = await stderrTail(job.logs.stderr);
    const message = `Step "${step}": ${program} ${how(code)} (${label} job ${job.id}).${tail ? `\nstderr (last lines):\n${tail}` : ' It wrote nothing to stderr.'}`;
    return { state: 'failed', exitCode: code, reason: `exit code ${code}`, error: new CairnError('CAIRN_COMMAND_FAILED', message, { step }) };
  }
  let text: string;
  try {
    text = await readFile(job.files.commandResult, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { state: 'succeeded', result: undefined, exitCode: 0 };
    throw err;
  }
  let reported;
  try {
    reported = parseReportedResult(step, program, text);
  } catch (error) {
    return { state: 'failed', exitCode: 0, reason: 'CAIRN_COMMAND_FAILED', error };
  }
  // As a local worker's ctx.log.info would: the metadata goes to the attempt's log.
  if (reported.metadata !== undefined) await appendFile(job.logs.stdout, maskText(`[${step}] INFO metadata ${JSON.stringify(reported.metadata)}\n`, Object.values(job.secrets ?? {}))).catch(() => undefined);
  return { state: 'succeeded', result: reported.result, exitCode: 0 };
}
