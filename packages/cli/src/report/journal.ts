/**
 * The run journal, as the CLI reads it: every run writes one into its store (the runner's
 * `journal` option, on by default: `@cairn/runner`'s journal/ module owns the format and the
 * writer), so `cairn report` and `cairn ui` show a whole run — cache hits and retries included,
 * which step records alone do not hold — whether `cairn run` or a user's script ran it.
 */
import { journalDir } from '@cairn/runner';
import type { StoreView } from '../store-view.js';

export { journalDir, journalFile } from '@cairn/runner';
export type { JournalEntry, JournalEvent, JournalPlan } from '@cairn/runner';

/** The newest journal file of the store, or undefined. */
export async function newestJournal(view: StoreView): Promise<string | undefined> {
  let best: { path: string; lastModified: number } | undefined;
  for (const f of await view.listFiles(journalDir(view.prefix))) {
    if (f.path.endsWith('.jsonl') && (best === undefined || f.lastModified > best.lastModified)) best = f;
  }
  return best?.path;
}
