/**
 * What the checkpointing test programs leave in their work directory (the `train.py` fixtures of
 * the runner and S3 checkpoint suites): one progress line per epoch, and a pid file per attempt.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Lines of the program's progress file: `{attempt}-{pid} {epoch} {checkpointDir}`. */
export function progress(work: string): { by: string; epoch: number; dir: string }[] {
  const f = join(work, 'progress');
  if (!existsSync(f)) return [];
  return readFileSync(f, 'utf8')
    .trim()
    .split('\n')
    .map((l) => {
      const [by, epoch, dir] = l.split(' ');
      return { by: by as string, epoch: Number(epoch), dir: dir as string };
    });
}

/** The pid of attempt `attempt`'s program (its `pid-{attempt}` file). */
export const pidOf = (work: string, attempt: number): number => Number(readFileSync(join(work, `pid-${attempt}`), 'utf8').split(' ')[0]);
