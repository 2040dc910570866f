/**
 * Grid Engine's job states and accounting codes, and what each means for a Cairn step: the
 * Grid Engine row of the grid core's state table. The decision itself is the grid core's
 * `decide`, the same for every scheduler.
 *
 * `qstat` shows a job's state as letters (`qw`, `hqw`, `r`, `t`, `Rr`, `dr`, `s`, `Eqw`…); a
 * finished job leaves `qstat` at once, and only accounting (`qacct`: `failed`, `exit_status`)
 * says how it ended.
 */
import type { SchedulerJobInfo, StateClass } from '@cairn/grid';

/** The letters of a `qstat` state, in the order they are checked, and their class. */
export const SGE_STATE_LETTERS: readonly (readonly [letter: string, meaning: string, cls: StateClass])[] = [
  ['E', 'error: the job will not run until an admin clears it', 'stuck'],
  // A deletion under way (qdel; ours, or anyone's): the job is as good as cancelled.
  ['d', 'being deleted', 'killed'],
  ['r', 'running (Rr: restarted)', 'running'],
  ['t', 'transferring to its host', 'running'],
  ['s', 'suspended', 'running'],
  ['S', 'suspended by its queue', 'running'],
  ['T', 'suspended at a threshold', 'running'],
  ['h', 'on hold', 'queued'],
  ['w', 'waiting', 'queued'],
  ['q', 'queued', 'queued'],
];

/** What a `qstat` state says. */
export function qstatInfo(state: string): SchedulerJobInfo {
  for (const [letter, , cls] of SGE_STATE_LETTERS) {
    if (state.includes(letter)) return { state, class: cls, reason: cls === 'stuck' ? state : cls === 'killed' ? 'CANCELLED' : undefined };
  }
  return { state, class: 'unknown' };
}

/** Accounting `failed` codes with a meaning of their own (the rest before 100 are node or setup trouble). */
export const SGE_FAILED_CODES: Readonly<Record<number, string>> = {
  0: 'ended on its own',
  37: 'qmaster enforced h_rt, h_cpu or h_vmem: TIMEOUT when it ran to its h_rt, else a limit',
  100: 'killed after it started (137 = SIGKILL: qdel or an outside kill)',
};

/** One accounting record (`qacct -j`). */
export interface AccountingRecord {
  /** `failed`: the number before the colon. */
  readonly failed: number;
  /** `failed`: the text after it. */
  readonly failedText: string;
  /** `exit_status`. */
  readonly exitStatus: number;
  /** `ru_wallclock` in seconds. */
  readonly wallclock: number | undefined;
  /** `h_rt` requested, from `category`, in seconds. */
  readonly hRt: number | undefined;
}

/** What an accounting record says. */
export function accountingInfo(r: AccountingRecord): SchedulerJobInfo {
  const exitCode = r.exitStatus;
  const word = `failed ${r.failed}`;
  if (r.failed === 0) return { state: `${word}, exit ${exitCode}`, class: exitCode === 0 ? 'completed' : 'failed', exitCode };
  if (r.failed === 37) {
    const timedOut = r.hRt !== undefined && r.wallclock !== undefined && r.wallclock >= r.hRt - 1;
    return { state: word, class: 'killed', reason: timedOut ? 'TIMEOUT' : `LIMIT (${r.failedText || 'h_cpu or h_vmem'})`, exitCode };
  }
  if (r.failed === 100) {
    return exitCode === 137 ? { state: word, class: 'killed', reason: 'CANCELLED', exitCode } : { state: word, class: 'failed', exitCode };
  }
  // Before or around the job (prolog, shepherd, output file, shell, working directory…): the host's or the setup's trouble.
  return { state: word, class: 'infrastructure', reason: `failed ${r.failed}${r.failedText ? `: ${r.failedText}` : ''}`, exitCode };
}
