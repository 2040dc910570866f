/**
 * The end of a job that wrote nothing on the runner's disk (command-staged.ts): its log and result
 * come back through Ray's job log, read ONCE when the job has ended (`GET /api/jobs/{id}/logs`).
 * The log, without the marked result line, becomes the attempt's stdout log (published with the
 * output; Ray keeps stdout and stderr interleaved in one log, so the failure report quotes its
 * tail); the last marked line, decoded, becomes the result file the runner judges
 * (command-status.ts), exactly as a shared-filesystem job's.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { JobsClient } from './client.js';
import { RESULT_MARK } from './far/s3-transfer-py.js';

/** Splits Ray's log of a job into the program's lines and the result it reported (the last marked line), if any. */
export function splitResult(log: string): { log: string; result: Buffer | undefined } {
  let result: Buffer | undefined;
  const kept: string[] = [];
  for (const line of log.split('\n')) {
    if (line.startsWith(RESULT_MARK)) result = Buffer.from(line.slice(RESULT_MARK.length).trim(), 'base64');
    else kept.push(line);
  }
  return { log: kept.join('\n'), result };
}

/** Reads the log of job `id` into `stdoutLog` and its result into `resultPath` (removed when it reported none). */
export async function collectFromLogs(client: JobsClient, id: string, stdoutLog: string, resultPath: string): Promise<void> {
  const { log, result } = splitResult(await client.logs(id));
  // A runner that adopted the job may have swept the staging directory the handle names.
  await Promise.all([mkdir(dirname(stdoutLog), { recursive: true }), mkdir(dirname(resultPath), { recursive: true })]);
  await writeFile(stdoutLog, log);
  if (result === undefined) await rm(resultPath, { force: true });
  else await writeFile(resultPath, result);
}

/** Followed log lines (`cairn logs -f`) without the result line. */
export async function* withoutResultLine(lines: AsyncIterable<string>): AsyncIterable<string> {
  for await (const line of lines) if (!line.startsWith(RESULT_MARK)) yield line;
}
