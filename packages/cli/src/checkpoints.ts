/**
 * A step's checkpoint directory as the CLI shows it: its current generation (`gen-N`, runner
 * README "Commits and leases") and how much it holds, read through the store's browser
 * (`Store.browse.checkpoints`). `cairn status` shows it; `cairn clean` removes it with the step's
 * output unless told to keep it.
 */
import type { CheckpointSummary } from '@cairn/runner';
import { formatBytes } from './bytes.js';

export type { CheckpointSummary } from '@cairn/runner';

/** `gen 3: 5 files, 1.2 MB`. */
export function describeCheckpoints(c: CheckpointSummary): string {
  return `gen ${c.generation}: ${c.files} file${c.files === 1 ? '' : 's'}, ${formatBytes(c.bytes)}`;
}
