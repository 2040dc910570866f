/**
 * How a grid job ended, decided from what the scheduler says and what the wrapper wrote. A
 * pure function, the same for every scheduler: each adapter only maps its states to a
 * {@link StateClass}. The exit-code file is the truth about how the step ended; the scheduler's
 * state says why a job was stopped.
 */
import type { ExitRecord } from './files.js';
import type { SchedulerJobInfo, StateClass } from './scheduler.js';

/** What the executor observed about one step in one status check. */
export interface Observation {
  /** The scheduler's view of the step's job (or array task); `undefined` when neither the queue nor accounting lists it. */
  readonly info?: SchedulerJobInfo | undefined;
  /** The exit-code file, when present. */
  readonly exit?: ExitRecord | undefined;
  /** The step's begin marker exists. */
  readonly begun: boolean;
  /** This executor asked to cancel the step. */
  readonly cancelRequested: boolean;
  /** The grace window for a missing exit-code file (shared-filesystem lag) has run out. */
  readonly graceExpired: boolean;
  /** The step is one of several in a packed task: its task may run while the step waits its turn. */
  readonly packed?: boolean;
  /** An earlier look reported the step running (a job queued again after that was requeued). */
  readonly wasRunning?: boolean;
}

/** What the executor should do about one step. */
export type Verdict =
  /** Not finished: report this state (if it changed). */
  | { readonly kind: 'active'; readonly state: 'queued' | 'running' }
  /** Finished per the exit-code file: read the worker's result. */
  | { readonly kind: 'result'; readonly code: number; readonly reason?: string | undefined }
  /** Finished without a usable result. */
  | { readonly kind: 'ended'; readonly state: 'failed' | 'cancelled' | 'lost' | 'preempted'; readonly reason: string; readonly exitCode?: number | undefined; readonly infrastructure?: boolean }
  /** Wait for the exit-code file or for the scheduler's final word. */
  | { readonly kind: 'wait' };

/** The signal the wrappers record for a walltime warning. */
export const WARN_SIGNAL = 'USR2';

const TERMINAL = new Set<StateClass>(['completed', 'failed', 'killed', 'infrastructure', 'preempted', 'stuck']);

/** True for a class the scheduler will not leave. */
export function isTerminalClass(c: StateClass | undefined): boolean {
  return c !== undefined && TERMINAL.has(c);
}

const why = (s: SchedulerJobInfo): string => s.reason ?? s.state;
const lost = (reason: string, exitCode?: number): Verdict => ({ kind: 'ended', state: 'lost', reason, ...(exitCode !== undefined ? { exitCode } : {}), infrastructure: true });
const preempted = (s: SchedulerJobInfo, exitCode?: number): Verdict => ({ kind: 'ended', state: 'preempted', reason: why(s), ...(exitCode !== undefined ? { exitCode } : {}) });
const killed = (s: SchedulerJobInfo, cancelRequested: boolean, exitCode: number | undefined): Verdict =>
  why(s) === 'CANCELLED' && cancelRequested ? { kind: 'ended', state: 'cancelled', reason: 'CANCELLED', exitCode } : { kind: 'ended', state: 'failed', reason: why(s), exitCode };

/** Decides a step's status. `completed`, `running` or `unknown` never count as success without the exit-code file. */
export function decide(o: Observation): Verdict {
  const s = o.info;
  const c = s?.class;
  const e = o.exit;
  if (e) {
    if (e.unstarted) {
      // The task was stopped before this step's turn: not the step's doing.
      if (o.cancelRequested) return { kind: 'ended', state: 'cancelled', reason: 'CANCELLED', exitCode: e.code };
      if (e.signal === WARN_SIGNAL) return lost('TIMEOUT (the packed task reached its time limit before this step started)', e.code);
    }
    if (e.signal === null) {
      if (e.code === 0) return { kind: 'result', code: 0 };
      // The worker may die of the scheduler's TERM before the wrapper sees its own: the scheduler says why.
      if (s && c === 'preempted') return preempted(s, e.code);
      if (s && (c === 'infrastructure' || c === 'stuck')) return lost(why(s), e.code);
      if (s && c === 'killed') return killed(s, o.cancelRequested, e.code);
      if (e.code > 128 && !isTerminalClass(c) && !o.graceExpired) return { kind: 'wait' };
      return { kind: 'result', code: e.code };
    }
    // Stopped by a signal: our cancel, the walltime warning, or an outside kill.
    if (o.cancelRequested) return { kind: 'ended', state: 'cancelled', reason: 'CANCELLED', exitCode: e.code };
    if (e.signal === WARN_SIGNAL) return { kind: 'ended', state: 'failed', reason: 'TIMEOUT', exitCode: e.code };
    if (s && c === 'preempted') return preempted(s, e.code);
    if (s && (c === 'infrastructure' || c === 'stuck')) return lost(why(s), e.code);
    if (s && c === 'killed') return { kind: 'ended', state: 'failed', reason: why(s), exitCode: e.code };
    if (c === 'completed' || c === 'failed') return { kind: 'ended', state: 'failed', reason: `SIG${e.signal}`, exitCode: e.code };
    // The scheduler has not settled yet (COMPLETING…): wait for it to say why, within the grace window.
    return o.graceExpired ? { kind: 'ended', state: 'failed', reason: `SIG${e.signal}`, exitCode: e.code } : { kind: 'wait' };
  }
  if (o.cancelRequested && (s === undefined || (o.packed && !o.begun))) {
    // Gone after our cancel, or a packed step that has not started (its worker skips it).
    return { kind: 'ended', state: 'cancelled', reason: 'CANCELLED' };
  }
  // Back in the queue after it ran (`scontrol requeue`, a requeue after a preemption or a node
  // failure, SGE's reschedule): the scheduler would run the step again under the same attempt;
  // Cairn cancels that job and retries from preemptionRetries instead. Not for packed steps (a
  // requeued pack reruns steps the worker may have finished).
  if (s && c === 'queued' && o.wasRunning === true && o.packed !== true && !o.cancelRequested) return { kind: 'ended', state: 'preempted', reason: `requeued (${s.state})` };
  if (c === 'queued') return { kind: 'active', state: o.begun ? 'running' : 'queued' };
  if (c === 'running') return { kind: 'active', state: o.packed && !o.begun ? 'queued' : 'running' };
  if (s && c === 'preempted') return preempted(s);
  if (s && (c === 'infrastructure' || c === 'stuck')) return lost(why(s));
  if (s && c === 'killed') {
    if (why(s) === 'TIMEOUT' && !o.begun && o.packed) return lost('TIMEOUT (the packed task reached its time limit before this step started)');
    return killed(s, o.cancelRequested, s.exitCode);
  }
  if (!o.graceExpired) return { kind: 'wait' };
  // The grace window is over and there is still no exit-code file.
  if (s && c === 'failed') return { kind: 'ended', state: 'failed', reason: s.state, exitCode: s.exitCode };
  if (c === 'completed') return lost('exit-code file missing (shared filesystem?)');
  if (s === undefined) return lost('job vanished from the scheduler');
  // `unknown`: keep watching.
  return { kind: 'wait' };
}
