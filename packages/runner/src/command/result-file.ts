/**
 * What a program may write to `$CAIRN_RESULT`, parsed: one rule for every executor that runs
 * command steps (the local runner reads the file itself; remote executors read it back from
 * their host and hand the text here).
 */
import { CairnError } from '@cairn/core';

/** What a program may write to `$CAIRN_RESULT` (JSON). */
export interface ReportedResult {
  /** The step's value (what `run()` returns for it). */
  readonly result?: unknown;
  /** Free-form facts about the run, written to the attempt's log. */
  readonly metadata?: Readonly<Record<string, unknown>>;
}

/** Parses the text of a result file written by `program` for `step`; `CAIRN_COMMAND_FAILED` when it is not a JSON object. */
export function parseReportedResult(step: string, program: string, text: string): ReportedResult {
  let reported: ReportedResult;
  try {
    reported = JSON.parse(text) as ReportedResult;
  } catch (cause) {
    throw new CairnError('CAIRN_COMMAND_FAILED', `Step "${step}": ${program} wrote a result that is not JSON ($CAIRN_RESULT); write {"result": …, "metadata": {…}} (cairn_step.report does).`, { step, cause });
  }
  if (typeof reported !== 'object' || reported === null || Array.isArray(reported)) {
    throw new CairnError('CAIRN_COMMAND_FAILED', `Step "${step}": ${program} wrote a result that is not a JSON object ($CAIRN_RESULT); write {"result": …, "metadata": {…}} (cairn_step.report does).`, { step });
  }
  return reported;
}
