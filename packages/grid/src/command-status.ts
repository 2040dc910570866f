/**
 * How a command job that ran its program itself ended, from the files its wrapper and the
 * program left: the wrapper's `command-error` (it could not start the program), the exit code
 * (0 = success; anything else a failure naming the code or signal, with the last lines of the
 * program's stderr), and the result the program reported in `$CAIRN_RESULT`.
 */
import { appendFile, readFile } from 'node:fs/promises';
import { constants } from 'node:os';
import { CairnError, type CairnErrorCode } from '@cairn/core';
import { logTail } from './logs.js';
import type { JobStatus } from './runner-api.js';
import type { Tracked } from './tracked.js';

/** The last lines of stderr quoted in a failure (as on the local executors). */
const TAIL_LINES = 20;

/** `exited with code 3`, or for 128+N `exited with code 137 (killed by SIGKILL)`. */
function how(code: number): string {
  const name = code > 128 ? Object.entries(constants.signals).find(([, n]) => n === code - 128)?.[0] : undefined;
  return `exited with code ${code}${name ? ` (killed by ${name})` : ''}`;
}

/** The step's status once its exit-code file says it exited with `code` (no wrapper signal). */
export async function commandStatus(job: Tracked, program: string, code: number, label: string): Promise<JobStatus> {
  const step = job.step;
  const refused = await readFile(job.files.commandError, 'utf8').catch(() => undefined);
  if (refused !== undefined) {
    const tab = refused.indexOf('\t');
    const errCode = (tab > 0 ? refused.slice(0, tab) : 'CAIRN_COMMAND_FAILED') as CairnErrorCode;
    const message = tab > 0 ? refused.slice(tab + 1).trim() : refused.trim();
    return { state: 'failed', exitCode: code, reason: errCode, error: new CairnError(errCode, message, { step }) };
  }
  if (code !== 0) {
    const tail = await logTail({ stderr: job.logs.stderr, stdout: job.logs.stderr }, TAIL_LINES);
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
  const bad = (what: string, cause?: unknown): JobStatus => ({
    state: 'failed',
    exitCode: 0,
    reason: 'CAIRN_COMMAND_FAILED',
    error: new CairnError('CAIRN_COMMAND_FAILED', `Step "${step}": ${program} wrote a result that is ${what} ($CAIRN_RESULT); write {"result": …, "metadata": {…}} (cairn_step.report does).`, { step, cause }),
  });
  let reported: { result?: unknown; metadata?: unknown };
  try {
    reported = JSON.parse(text) as typeof reported;
  } catch (cause) {
    return bad('not JSON', cause);
  }
  if (typeof reported !== 'object' || reported === null || Array.isArray(reported)) return bad('not a JSON object');
  // As a local worker's ctx.log.info would: the metadata goes to the attempt's log.
  if (reported.metadata !== undefined) await appendFile(job.logs.stdout, `[${step}] INFO metadata ${JSON.stringify(reported.metadata)}\n`).catch(() => undefined);
  return { state: 'succeeded', result: reported.result, exitCode: 0 };
}
