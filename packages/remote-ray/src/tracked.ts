/** What the Ray executor keeps about a job it watches, and how it is rebuilt from a recorded handle. */
import type { JobHandle, JobState } from './runner-api.js';

/** What the executor keeps about a job it watches. */
export interface Tracked {
  /** The runner's handle. */
  readonly handle: JobHandle;
  /** The Ray submission id. */
  readonly id: string;
  /** The step's name. */
  readonly step: string;
  /** The worker's result file, when the step writes one. */
  readonly resultPath: string | undefined;
  /** A command step's program (its result file is JSON, its exit code the outcome). */
  readonly program: string | undefined;
  /** The attempt's log files. */
  readonly logPaths: { readonly stdout: string; readonly stderr: string } | undefined;
  /** The job writes nothing on the runner's disk: its log and result come from Ray's job log when it ends (ray-log-result.ts). */
  readonly resultFromLogs: boolean;
  /** Cairn asked Ray to stop it. */
  cancelRequested: boolean;
  /** The state last reported. */
  lastState: JobState | undefined;
  /** Status checks in a row that did not list it. */
  missing: number;
  /** The step's secret values (in memory only; not after adoption): masked in lines the executor writes to the attempt's log. */
  secrets?: Readonly<Record<string, string>> | undefined;
}

/** The tracked job of `handle`, or `undefined` when it is not a handle of the executor `name`. */
export function trackedFrom(handle: JobHandle, name: string): Tracked | undefined {
  const info = handle.info as { submissionId?: unknown; resultPath?: unknown; logPaths?: unknown; step?: unknown; program?: unknown; resultFromLogs?: unknown };
  if (handle.executor !== name || typeof info.submissionId !== 'string') return undefined;
  return {
    handle,
    id: info.submissionId,
    step: typeof info.step === 'string' ? info.step : handle.jobId,
    resultPath: typeof info.resultPath === 'string' ? info.resultPath : undefined,
    program: typeof info.program === 'string' ? info.program : undefined,
    logPaths: info.logPaths as Tracked['logPaths'],
    resultFromLogs: info.resultFromLogs === true,
    cancelRequested: false,
    lastState: undefined,
    missing: 0,
  };
}
