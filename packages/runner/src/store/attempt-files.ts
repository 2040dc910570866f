/**
 * Where an attempt's own files live inside an output (or staged) directory, for every store:
 * its logs under `.cairn/logs/` (published with the output, so Marin's readers and `cairn logs`
 * find them) and its scratch directory `.cairn/attempt-N/` (task, result, `usage.json`). One
 * rule: the stores stage attempts with it, and tools read committed attempts with it.
 */

/** The logs directory of an output (or staged) directory. */
export function logsDirIn(dir: string): string {
  return `${dir}/.cairn/logs`;
}

/** Attempt `attempt`'s files inside the output (or staged) directory `dir`. */
export function attemptFilesIn(dir: string, attempt: number): { readonly stdout: string; readonly stderr: string; readonly scratch: string } {
  const logs = logsDirIn(dir);
  return { stdout: `${logs}/attempt-${attempt}.stdout`, stderr: `${logs}/attempt-${attempt}.stderr`, scratch: `${dir}/.cairn/attempt-${attempt}` };
}

/** The attempt number of a log file's name (`attempt-3.stderr` → 3); undefined for other names. */
export function attemptOfLogName(name: string): number | undefined {
  const m = /^attempt-(\d+)\.(?:stdout|stderr)$/.exec(name);
  return m === null ? undefined : Number(m[1]);
}
