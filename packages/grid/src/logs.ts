/** Reading a job's log files (shared filesystem). */
import { open } from 'node:fs/promises';

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
