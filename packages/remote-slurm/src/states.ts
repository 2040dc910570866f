/**
 * Slurm job states and what they mean for a Cairn job. Pure functions: the executor feeds
 * them what `squeue`/`sacct`/slurmrestd and the exit-code file say.
 */

/** What the executor observed about one job in one status check. */
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

/** What the executor should do about one job. */
export type Verdict =
  /** Not finished: report this state (if it changed). */
  | { readonly kind: 'active'; readonly state: 'queued' | 'running' }
  /** Finished per the exit-code file: read the worker's result. */
  | { readonly kind: 'result'; readonly code: number; readonly reason?: string | undefined }
  /** Finished without a usable result. */
  | { readonly kind: 'ended'; readonly state: 'failed' | 'cancelled' | 'lost'; readonly reason: string; readonly exitCode?: number | undefined; readonly infrastructure?: boolean }
  /** Wait for the exit-code file (shared-filesystem lag) or for Slurm's final state. */
  | { readonly kind: 'wait' };

const QUEUED = new Set(['PENDING', 'CONFIGURING', 'REQUEUED', 'REQUEUE_HOLD', 'REQUEUE_FED', 'RESV_DEL_HOLD', 'SPECIAL_EXIT']);
const RUNNING = new Set(['RUNNING', 'COMPLETING', 'SUSPENDED', 'STOPPED', 'SIGNALING', 'STAGE_OUT', 'RESIZING']);
/** Node or scheduler trouble, not the step's fault: retried without spending the step's retries. */
const INFRASTRUCTURE = new Set(['NODE_FAIL', 'BOOT_FAIL', 'PREEMPTED', 'REVOKED']);
/** Slurm stopped the job: the step fails with this reason. */
const KILLED = new Set(['TIMEOUT', 'OUT_OF_MEMORY', 'DEADLINE', 'CANCELLED']);
/** Ended on its own: the exit-code file says how. */
const EXITED = new Set(['COMPLETED', 'FAILED']);

/** True for a state Slurm will not leave. */
export function isTerminalSlurmState(state: string | undefined): boolean {
  return state !== undefined && (INFRASTRUCTURE.has(state) || KILLED.has(state) || EXITED.has(state));
}

/** The first word, upper-case (`"CANCELLED by 0"` → `CANCELLED`). */
export function normalizeState(state: string): string {
  return (state.trim().split(/\s+/)[0] ?? '').replace(/\+$/, '').toUpperCase();
}

/**
 * Decides a job's status. The exit-code file is the truth for how the step ended; Slurm's
 * state says why a job was stopped. `UNKNOWN` or `COMPLETING` never count as success.
 */
export function decide(o: Observation): Verdict {
  const s = o.slurmState;
  if (o.exit) {
    if (o.exit.signal === null) {
      if (o.exit.code === 0) return { kind: 'result', code: 0 };
      // The worker may die of Slurm's TERM before the wrapper sees its own: Slurm says why.
      if (s !== undefined && INFRASTRUCTURE.has(s)) return { kind: 'ended', state: 'lost', reason: s, exitCode: o.exit.code, infrastructure: true };
      if (s !== undefined && KILLED.has(s)) {
        if (s === 'CANCELLED' && o.cancelRequested) return { kind: 'ended', state: 'cancelled', reason: 'CANCELLED', exitCode: o.exit.code };
        return { kind: 'ended', state: 'failed', reason: s, exitCode: o.exit.code };
      }
      if (o.exit.code > 128 && !isTerminalSlurmState(s) && !o.graceExpired) return { kind: 'wait' };
      return { kind: 'result', code: o.exit.code };
    }
    // Stopped by a signal: our cancel, Slurm's walltime warning, or an outside kill.
    if (o.cancelRequested) return { kind: 'ended', state: 'cancelled', reason: 'CANCELLED', exitCode: o.exit.code };
    if (o.exit.signal === 'USR2') return { kind: 'ended', state: 'failed', reason: 'TIMEOUT', exitCode: o.exit.code };
    if (s !== undefined && INFRASTRUCTURE.has(s)) return { kind: 'ended', state: 'lost', reason: s, exitCode: o.exit.code, infrastructure: true };
    if (s !== undefined && KILLED.has(s)) return { kind: 'ended', state: 'failed', reason: s, exitCode: o.exit.code };
    if (s !== undefined && EXITED.has(s)) return { kind: 'ended', state: 'failed', reason: `SIG${o.exit.signal}`, exitCode: o.exit.code };
    // Slurm has not settled yet (COMPLETING…): wait for it to say why, within the grace window.
    return o.graceExpired ? { kind: 'ended', state: 'failed', reason: `SIG${o.exit.signal}`, exitCode: o.exit.code } : { kind: 'wait' };
  }
  if (s !== undefined && QUEUED.has(s)) return { kind: 'active', state: o.begun ? 'running' : 'queued' };
  if (s !== undefined && RUNNING.has(s)) return { kind: 'active', state: 'running' };
  if (s !== undefined && INFRASTRUCTURE.has(s)) return { kind: 'ended', state: 'lost', reason: s, infrastructure: true };
  if (s !== undefined && KILLED.has(s)) {
    if (s === 'CANCELLED' && o.cancelRequested) return { kind: 'ended', state: 'cancelled', reason: 'CANCELLED' };
    return { kind: 'ended', state: 'failed', reason: s, exitCode: o.slurmExitCode };
  }
  if (!o.graceExpired) return { kind: 'wait' };
  // The grace window is over and there is still no exit-code file.
  if (s === 'FAILED') return { kind: 'ended', state: 'failed', reason: 'FAILED', exitCode: o.slurmExitCode };
  if (s === 'COMPLETED') return { kind: 'ended', state: 'lost', reason: 'exit-code file missing (shared filesystem?)', infrastructure: true };
  if (s === undefined) return { kind: 'ended', state: 'lost', reason: 'job vanished from Slurm', infrastructure: true };
  // UNKNOWN or a state this code does not know: keep watching.
  return { kind: 'wait' };
}
