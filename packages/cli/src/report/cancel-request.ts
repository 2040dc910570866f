/**
 * Cancelling a run through its store: `cairn ui --allow-actions` writes
 * `{prefix}/.cairn/runs/{runId}.cancel`, and the `cairn run` that owns the run polls for it and
 * cancels as Ctrl-C does (running steps record CANCELLED and release their leases). Going
 * through the store, not a signal, reaches a runner on any host that shares the store.
 */
import { existsSync } from 'node:fs';
import type { Store } from '@cairn/runner';
import { journalDir } from './journal.js';

/** How often a run looks for a cancel request (one existence check, or one GET on an object store). */
export const CANCEL_POLL_MS = 1000;

/** The cancel-request file of one run. */
export function cancelFile(prefix: string, runId: string): string {
  return `${journalDir(prefix)}/${runId}.cancel`;
}

/** True when a cancel request for `runId` is in the store (a read that fails counts as none). */
export async function cancelRequested(prefix: string, store: Store, runId: string): Promise<boolean> {
  const file = cancelFile(prefix, runId);
  if (store.browse === undefined) return existsSync(file);
  return (await store.browse.readFile(file).catch(() => null)) !== null;
}

/** Calls `onCancel` once when a cancel request for `runId` appears; returns the function that stops watching. */
export function watchCancelRequest(prefix: string, store: Store, runId: string, onCancel: () => void, everyMs = CANCEL_POLL_MS): () => void {
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    void cancelRequested(prefix, store, runId)
      .then((yes) => {
        if (!yes) return;
        clearInterval(timer);
        onCancel();
      })
      .finally(() => (busy = false));
  }, everyMs).unref();
  return () => clearInterval(timer);
}
