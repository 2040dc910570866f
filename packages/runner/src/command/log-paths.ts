/**
 * How a command step finds its attempt's log files: executors that know them (the `inline`
 * executor's context, the `threads` worker) put them on the step context under this symbol, so
 * the program's stdout and stderr go straight to those files (the runner copies nothing, holds
 * nothing in memory). Without them, the program's output is piped to the worker's own stdout and
 * stderr (which the `process` executor and remote hosts point at the log files).
 */

/** An attempt's log files. */
export interface AttemptLogPaths {
  /** The stdout log (appended to). */
  readonly stdout: string;
  /** The stderr log (appended to). */
  readonly stderr: string;
}

/** The step-context key of {@link AttemptLogPaths} (registered: the same in every package copy). */
export const LOG_PATHS = Symbol.for('cairn.attemptLogPaths');

/** The log files a step context carries, if any. */
export function logPathsOf(ctx: object): AttemptLogPaths | undefined {
  const paths = (ctx as Record<symbol, unknown>)[LOG_PATHS] as AttemptLogPaths | undefined;
  return paths !== undefined && typeof paths.stdout === 'string' && typeof paths.stderr === 'string' ? paths : undefined;
}
