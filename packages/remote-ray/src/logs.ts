/** Ray's own logs of a job (`GET /api/jobs/{id}/logs`), as lines: for jobs whose log files the runner cannot read. */
import type { JobsClient } from './client.js';

/** Ray's logs of a job, as lines; `follow` polls for more until the job ends. */
export async function* rayLogs(client: JobsClient, id: string, follow: boolean, isRunning: () => boolean, signal: AbortSignal | undefined, intervalMs: number): AsyncIterable<string> {
  let seen = 0;
  let partial = '';
  for (;;) {
    const running = isRunning();
    const text = await client.logs(id);
    const fresh = partial + text.slice(seen);
    seen = text.length;
    const lines = fresh.split('\n');
    partial = lines.pop() ?? '';
    yield* lines;
    if (!follow || !running || signal?.aborted) break;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  if (partial) yield partial;
}
