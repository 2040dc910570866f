/** Job names and walltime warnings, the same for every scheduler. */

/** A scheduler-safe job name from a step identity: `[A-Za-z0-9_.-]`, at most 128 characters. */
export function jobName(prefix: string, nameWithHash: string): string {
  const safe = `${prefix}-${nameWithHash}`.replace(/[^A-Za-z0-9_.-]+/g, '_');
  // Keep the hash (the tail) when truncating: it is what tells jobs apart.
  return safe.length <= 128 ? safe : `${safe.slice(0, 111)}${safe.slice(-17)}`;
}

/**
 * Seconds before a time limit at which the wrapper gets the walltime warning (`USR2`): the
 * configured grace, else a tenth of the limit and at most a minute. `limitSeconds` is the
 * limit as the scheduler enforces it (Slurm rounds up to whole minutes).
 */
export function warnSecondsFor(limitSeconds: number | undefined, configured: number | undefined): number {
  if (limitSeconds === undefined) return 0;
  const grace = configured ?? Math.min(60, Math.floor(limitSeconds / 10));
  return Math.max(0, Math.min(grace, limitSeconds - 1));
}
