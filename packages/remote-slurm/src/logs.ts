/** Reading a job's log files (shared filesystem). */
import { open, stat } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

/** The last `lines` lines of the first non-empty file (stderr before stdout), at most 8 KiB read. */
export async function logTail(paths: { readonly stdout: string; readonly stderr: string }, lines = 20): Promise<string> {
  for (const path of [paths.stderr, paths.stdout]) {
    const handle = await open(path, 'r').catch(() => undefined);
    if (!handle) continue;
    try {
      const { size } = await handle.stat();
      const len = Math.min(size, 8192);
      const buf = Buffer.alloc(len);
      await handle.read(buf, 0, len, size - len);
      const text = buf.toString('utf8').trimEnd();
      if (text) return text.split('\n').slice(-lines).join('\n');
    } finally {
      await handle.close();
    }
  }
  return '';
}

/**
 * Yields the lines of stdout, then stderr. With `follow`, keeps polling both files for new
 * lines until `running()` turns false or `signal` aborts.
 */
export async function* readLogLines(
  paths: { readonly stdout: string; readonly stderr: string },
  options: { follow: boolean; signal?: AbortSignal | undefined; running: () => boolean; intervalMs?: number },
): AsyncIterable<string> {
  const offsets = new Map<string, number>();
  const pending = new Map<string, string>();
  const drain = async function* (final: boolean): AsyncIterable<string> {
    for (const path of [paths.stdout, paths.stderr]) {
      const from = offsets.get(path) ?? 0;
      const size = await stat(path).then((s) => s.size, () => 0);
      if (size > from) {
        const handle = await open(path, 'r');
        try {
          const buf = Buffer.alloc(size - from);
          await handle.read(buf, 0, buf.length, from);
          offsets.set(path, size);
          const parts = ((pending.get(path) ?? '') + buf.toString('utf8')).split('\n');
          pending.set(path, parts.pop() ?? '');
          yield* parts;
        } finally {
          await handle.close();
        }
      }
      const rest = pending.get(path);
      if (final && rest) {
        pending.set(path, '');
        yield rest;
      }
    }
  };
  while (options.follow && options.running() && !options.signal?.aborted) {
    yield* drain(false);
    await sleep(options.intervalMs ?? 250, undefined, { signal: options.signal }).catch(() => undefined);
  }
  yield* drain(true);
}
