/**
 * Slurm's job states and what each means for a Cairn step: the Slurm row of the grid core's
 * state table. The decision itself is the grid core's `decide`, the same for every scheduler.
 */
import { decide as gridDecide, type SchedulerJobInfo, type StateClass, type Verdict } from '@cairn/grid';

export type { Verdict } from '@cairn/grid';

/** Every Slurm state Cairn knows, and its class. A state not listed is `unknown` (keep watching). */
export const SLURM_STATES: Readonly<Record<string, StateClass>> = {
  PENDING: 'queued',
  CONFIGURING: 'queued',
  REQUEUED: 'queued',
  REQUEUE_HOLD: 'queued',
  REQUEUE_FED: 'queued',
  RESV_DEL_HOLD: 'queued',
  SPECIAL_EXIT: 'queued',
  RUNNING: 'running',
  COMPLETING: 'running',
  SUSPENDED: 'running',
  STOPPED: 'running',
  SIGNALING: 'running',
  STAGE_OUT: 'running',
  RESIZING: 'running',
  COMPLETED: 'completed',
  FAILED: 'failed',
  // Slurm stopped the job: the step fails with this reason.
  TIMEOUT: 'killed',
  OUT_OF_MEMORY: 'killed',
  DEADLINE: 'killed',
  CANCELLED: 'killed',
  // Node or scheduler trouble, not the step's fault: retried from infraRetries, without spending
  // the step's retries. A failed node is a fault (a few retries), not a reclaimed one.
  NODE_FAIL: 'infrastructure',
  BOOT_FAIL: 'infrastructure',
  // The job's resources went to a higher-priority job: retried from preemptionRetries.
  PREEMPTED: 'preempted',
  REVOKED: 'infrastructure',
};

/** The first word, upper-case (`"CANCELLED by 0"` → `CANCELLED`). */
export function normalizeState(state: string): string {
  return (state.trim().split(/\s+/)[0] ?? '').replace(/\+$/, '').toUpperCase();
}

/** What a (normalised) Slurm state says, for the grid core. Killed and infrastructure states are their own reason. */
export function slurmInfo(state: string, reason?: string, exitCode?: number): SchedulerJobInfo {
  const c = SLURM_STATES[state] ?? 'unknown';
  return { state, class: c, reason: c === 'killed' || c === 'infrastructure' || c === 'preempted' ? state : reason, exitCode };
}

/** True for a state Slurm will not leave. */
export function isTerminalSlurmState(state: string | undefined): boolean {
  const c = state === undefined ? undefined : SLURM_STATES[state];
  return c === 'completed' || c === 'failed' || c === 'killed' || c === 'infrastructure' || c === 'preempted';
}

/** What the executor observed about one job, in Slurm's terms. */
export interface Observation {
  /** Slurm's state (`RUNNING`, `CANCELLED`…; first word only), or `undefined` when Slurm no longer lists the job. */
  readonly slurmState?: string | undefined;
  /** Slurm's reason (`TimeLimit`, `None`…). */
  readonly slurmReason?: string | undefined;
  /** Slurm's exit code (`sacct`/REST), when known. */
  readonly slurmExitCode?: number | undefined;
  /** The wrapper's exit-code file, when present. */
  readonly exit?: { readonly code: number; readonly signal: string | null } | undefined;
  /** The begin marker exists (the job started on a node). */
  readonly begun: boolean;
  /** This executor asked Slurm to cancel the job. */
  readonly cancelRequested: boolean;
  /** The grace window for a missing exit-code file has run out. */
  readonly graceExpired: boolean;
}

/** The grid core's decision for a Slurm observation. */
export function decide(o: Observation): Verdict {
  const info = o.slurmState === undefined ? undefined : slurmInfo(o.slurmState, o.slurmReason, o.slurmExitCode);
  return gridDecide({ info, exit: o.exit, begun: o.begun, cancelRequested: o.cancelRequested, graceExpired: o.graceExpired });
}
