/**
 * How a command step's Ray job ended, from its exit code (Ray's `driver_exit_code`), the result
 * file its program may have written and the tail of its stderr log — the same outcomes, codes and
 * messages as a command step run by the local runner: `succeeded` with the reported result (exit
 * 0), else `CAIRN_COMMAND_NOT_FOUND`, `CAIRN_COMMAND_SOURCE` or `CAIRN_COMMAND_FAILED` naming the
 * exit code or signal and the last lines of stderr; without a shared filesystem, `CAIRN_STORE` when
 * the node could not read a dependency from the bucket or upload the output (not the program's failure).
 */
import { appendFile, readFile } from 'node:fs/promises';
import { constants } from 'node:os';
import { CairnError } from '@cairn/core';
import { NOT_FOUND_EXIT, NOT_FOUND_MARK, SOURCE_CHANGED_MARK, STAGE_FAILED_EXIT, TRANSFER_FAILED_MARK } from './command-entrypoint.js';
import { fileTail, lastLines, lineLogger, maskText, parseReportedResult, type JobStatus } from './runner-api.js';

/** What is known of a command job that ended. */
export interface CommandJobFacts {
  /** The step's name. */
  readonly step: string;
  /** The Ray submission id. */
  readonly id: string;
  /** The program, as the step declared it. */
  readonly program: string;
  /** The program's result file (`$CAIRN_RESULT`). */
  readonly resultPath: string;
  /** The attempt's log files. */
  readonly logPaths: { readonly stdout: string; readonly stderr: string } | undefined;
  /** Ray's message about the job (its own log tail, when the script could not reach the log files). */
  readonly message?: string | null | undefined;
  /** The step's secret values: masked in the metadata line written to the log (as the grid's). */
  readonly secrets?: Readonly<Record<string, string>> | undefined;
}

/** The step's outcome for exit code `code` (`null`: Ray did not say). */
export async function commandOutcome(code: number | null, job: CommandJobFacts): Promise<JobStatus> {
  const { step, program } = job;
  if (code === 0) {
    let text: string | undefined;
    try {
      text = await readFile(job.resultPath, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') return { state: 'failed', error: new CairnError('CAIRN_COMMAND_FAILED', `Step "${step}": cannot read the result ${program} wrote at ${job.resultPath} (${(err as Error).message}).`, { step, cause: err }), exitCode: 0 };
    }
    if (text === undefined) return { state: 'succeeded', result: undefined, exitCode: 0 };
    try {
      const reported = parseReportedResult(step, program, text);
      if (reported.metadata !== undefined && job.logPaths) {
        const stdout = job.logPaths.stdout;
        let line = '';
        lineLogger(step, (_level, l) => (line = l)).info(`metadata ${JSON.stringify(reported.metadata)}`);
        await appendFile(stdout, maskText(line, Object.values(job.secrets ?? {}))).catch(() => undefined);
      }
      return { state: 'succeeded', result: reported.result, exitCode: 0 };
    } catch (error) {
      return { state: 'failed', error, exitCode: 0, reason: 'CAIRN_COMMAND_FAILED' };
    }
  }
  const tail = (await stderrTail(job.logPaths?.stderr)) || lastLines(job.message ?? '');
  let error: CairnError;
  if (code === NOT_FOUND_EXIT && tail.includes(NOT_FOUND_MARK)) {
    const line = tail.slice(tail.lastIndexOf(NOT_FOUND_MARK) + NOT_FOUND_MARK.length).trim();
    error = new CairnError('CAIRN_COMMAND_NOT_FOUND', `Step "${step}": cannot start ${line} (Ray job ${job.id}); install it on the Ray nodes, fix the name, or give its path.`, { step });
  } else if (code === STAGE_FAILED_EXIT && tail.includes(SOURCE_CHANGED_MARK)) {
    error = new CairnError('CAIRN_COMMAND_SOURCE', `Step "${step}": ${tail.slice(tail.lastIndexOf(SOURCE_CHANGED_MARK) + 'cairn: '.length).trim()} (Ray job ${job.id}).`, { step });
  } else if (code === STAGE_FAILED_EXIT && tail.includes(TRANSFER_FAILED_MARK)) {
    // Not the program's failure: the node's transfer to or from the bucket (its reason is on the lines before).
    const line = tail.slice(tail.lastIndexOf(TRANSFER_FAILED_MARK) + TRANSFER_FAILED_MARK.length).split('\n')[0]?.trim();
    error = new CairnError('CAIRN_STORE', `Step "${step}": the Ray node ${line} (Ray job ${job.id}).\nlog (last lines):\n${tail}`, { step });
  } else {
    error = new CairnError('CAIRN_COMMAND_FAILED', `Step "${step}": ${program} ${describeExit(code)} (Ray job ${job.id}).${tail ? `\nstderr (last lines):\n${tail}` : ' It wrote nothing to stderr.'}`, { step });
  }
  Object.assign(error, { exitCode: code, logTail: tail });
  return { state: 'failed', error, exitCode: code, reason: `exit code ${String(code)}` };
}

/** `exited with code N`, or `was killed by SIGX` (a negative code from Ray, or the shell's 128+N). */
export function describeExit(code: number | null): string {
  if (code === null) return 'ended without an exit code';
  const signo = code < 0 ? -code : code > 128 ? code - 128 : 0;
  const name = signo > 0 ? Object.entries(constants.signals).find(([, n]) => n === signo)?.[0] : undefined;
  return name === undefined ? `exited with code ${code}` : `was killed by ${name} (exit status ${code})`;
}

/** The last lines of the attempt's stderr log ('' when there is none). */
const stderrTail = async (path: string | undefined): Promise<string> => (path === undefined ? '' : fileTail(path, 0));
