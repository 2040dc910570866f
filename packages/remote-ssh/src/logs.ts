/**
 * A job's logs, read on its host: both files at once (`follow: false`), or followed as they grow
 * until the job's exit file appears or the caller aborts (one streamed exec, split into lines).
 */
import type { JobHandle } from '@cairn/runner/executor';
import type { Fleet, SshJobInfo } from './model.js';
import { shScript } from './quote.js';
import { CAT_LOGS_SCRIPT, FOLLOW_SCRIPT } from './remote-script.js';

/** `Executor.logs` (after start): stdout and stderr lines of the job's remote log files. */
export async function* readLogs(f: Fleet, handle: JobHandle, options: { follow: boolean; signal?: AbortSignal }): AsyncIterable<string> {
  const info = handle.info as unknown as SshJobInfo;
  const h = f.hostOf(handle);
  if (!h || !info.jobDir) return;
  const files = [`${info.jobDir}/stdout.log`, `${info.jobDir}/stderr.log`];
  if (!options.follow) {
    const r = await h.conn.exec(shScript(CAT_LOGS_SCRIPT, files));
    for (const line of r.stdout.toString('utf8').split('\n')) if (line !== '') yield line;
    return;
  }
  const { channel, release } = await h.conn.stream(shScript(FOLLOW_SCRIPT, [String(info.pid ?? 0), ...files, `${info.jobDir}/exit`]));
  channel.stderr.resume();
  const onAbort = () => channel.close();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  let rest = '';
  try {
    for await (const chunk of channel as AsyncIterable<Buffer>) {
      rest += chunk.toString('utf8');
      const lines = rest.split('\n');
      rest = lines.pop() ?? '';
      for (const l of lines) yield l;
      if (options.signal?.aborted) break;
    }
    if (rest !== '') yield rest;
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
    channel.close();
    release();
  }
}
