/**
 * Ray's job states → Cairn's, as data (one table, table-tested in test/states.test.ts). The
 * decision is a pure function of what the Jobs API says; reading the worker's result file (which
 * says whether the step itself succeeded) happens afterwards, in status.ts.
 *
 * | Ray                                   | Cairn                                                   |
 * |---------------------------------------|---------------------------------------------------------|
 * | PENDING                               | queued                                                  |
 * | RUNNING                               | running                                                 |
 * | SUCCEEDED                             | ended: the result file decides (succeeded, or failed)   |
 * | FAILED, JOB_ENTRYPOINT_COMMAND_ERROR  | ended: the result file decides, else failed + exit code |
 * | FAILED, RUNTIME_ENV_SETUP_FAILURE     | failed (a bad pip package or working_dir: not retried as infrastructure) |
 * | FAILED, JOB_ENTRYPOINT_COMMAND_START_ERROR | failed (the entrypoint could not start)            |
 * | FAILED, JOB_SUPERVISOR_ACTOR_*        | lost, infrastructure (the node running it died, or it could not be placed) |
 * | STOPPED                               | cancelled (`CANCELLED` when Cairn asked, else `STOPPED`: stopped outside Cairn) |
 */
import type { RayJobInfo, RayJobStatus } from './client.js';

/** What a Ray job's state means for a step. */
export type RayVerdict =
  /** Waiting (resources, runtime environment). */
  | { readonly kind: 'queued' }
  /** The entrypoint runs. */
  | { readonly kind: 'running' }
  /** The entrypoint exited (`exitCode`); the worker's result file says how the step ended. */
  | { readonly kind: 'ended'; readonly exitCode: number | null }
  /** Ray could not run the entrypoint for a reason of the step's own (bad runtime environment, bad command). */
  | { readonly kind: 'failed'; readonly reason: string; readonly message: string }
  /** Ray lost the job (its node died) or could not place it: retried without spending the step's retries. */
  | { readonly kind: 'infrastructure'; readonly reason: string; readonly message: string }
  /** Stopped: by Cairn's cancel (`CANCELLED`) or from outside (`STOPPED`). */
  | { readonly kind: 'stopped'; readonly reason: 'CANCELLED' | 'STOPPED' };

/** Ray's states, each with the class it falls in (FAILED is refined by `error_type`). */
export const RAY_STATES: Readonly<Record<RayJobStatus, RayVerdict['kind']>> = {
  PENDING: 'queued',
  RUNNING: 'running',
  SUCCEEDED: 'ended',
  FAILED: 'ended',
  STOPPED: 'stopped',
};

/** FAILED jobs whose `error_type` is not the entrypoint's own exit: how each is classed. */
export const RAY_FAILURES: Readonly<Record<string, 'failed' | 'infrastructure'>> = {
  RUNTIME_ENV_SETUP_FAILURE: 'failed',
  JOB_ENTRYPOINT_COMMAND_START_ERROR: 'failed',
  JOB_SUPERVISOR_ACTOR_START_TIMEOUT: 'infrastructure',
  JOB_SUPERVISOR_ACTOR_START_FAILURE: 'infrastructure',
  JOB_SUPERVISOR_ACTOR_UNSCHEDULABLE: 'infrastructure',
  JOB_SUPERVISOR_ACTOR_UNKNOWN_FAILURE: 'infrastructure',
  JOB_SUPERVISOR_ACTOR_DIED: 'infrastructure',
};

/** The verdict on one job; `cancelRequested` says whether Cairn asked it to stop. */
export function classify(info: Pick<RayJobInfo, 'status' | 'error_type' | 'driver_exit_code' | 'message'>, cancelRequested: boolean): RayVerdict {
  const kind = RAY_STATES[info.status] as RayVerdict['kind'] | undefined;
  switch (kind) {
    case 'queued':
    case 'running':
      return { kind };
    case 'stopped':
      return { kind, reason: cancelRequested ? 'CANCELLED' : 'STOPPED' };
    case 'ended': {
      const type = info.error_type ?? undefined;
      if (info.status === 'FAILED' && type !== undefined && type !== 'JOB_ENTRYPOINT_COMMAND_ERROR') {
        // An error type this table does not know yet is treated as the cluster's fault: retried, not blamed on the step.
        return { kind: RAY_FAILURES[type] ?? 'infrastructure', reason: type, message: info.message ?? '' };
      }
      return { kind, exitCode: info.driver_exit_code ?? (info.status === 'SUCCEEDED' ? 0 : null) };
    }
    default:
      // A state newer than this table: keep watching.
      return { kind: 'running' };
  }
}
