/**
 * Entry of the persistent worker bundle (`ssh-worker.mjs`, uploaded like step bundles).
 *
 *   node ssh-worker.mjs serve <idleMs>   the worker (run in its directory by WORKER_SCRIPT)
 *   node ssh-worker.mjs connect          the relay between an SSH channel and the worker
 *   (thread)                             a step thread, started by the worker
 */
import { isMainThread } from 'node:worker_threads';
import { relay } from './relay.js';
import { serve } from './serve.js';
import { runThread } from './thread.js';

const [mode, arg] = process.argv.slice(2);
if (!isMainThread) runThread();
else if (mode === 'serve') serve(new URL(import.meta.url), Number(arg) > 0 ? Number(arg) : 60_000);
else if (mode === 'connect') relay();
else {
  process.stderr.write('usage: node ssh-worker.mjs serve <idleMs> | connect\n');
  process.exit(2);
}
