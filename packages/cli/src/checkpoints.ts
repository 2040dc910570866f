/**
 * A step's checkpoint directory as the CLI shows it: its current generation (`gen-N`, runner
 * README "Commits and leases") and how much it holds, read through the store's browser
 * (`Store.browse.checkpoints`). `cairn status` shows it; `cairn clean` removes it with the step's
 * output unless told to keep it.
 */
import type { CheckpointSummary } from '@cairn/runner';

export type { CheckpointSummary } from '@cairn/runner';

/** `gen 3: 5 files, 1.2 MB`. */
export function describeCheckpoints(c: CheckpointSummary): string {
  return `gen ${c.generation}: ${c.files} file${c.files === 1 ? '' : 's'}, ${formatBytes(c.bytes)}`;
}

function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['kB', 'MB', 'GB', 'TB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`;
}
