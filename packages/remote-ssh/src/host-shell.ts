/**
 * Each host's persistent shell as the executor uses it (the channel itself is shell-channel.ts):
 * opened in the background on first use, so that use goes on as an exec meanwhile; a launch takes
 * it when it is up and idle. A shell that could not open (no `mktemp` or `base64` on the host, a
 * full `MaxSessions`) is tried again a minute later; until then launches are execs, as before.
 */
import type { Fleet, HostState } from './model.js';
import { ShellChannel } from './shell-channel.js';

/** How long after a failed open the executor tries again. */
const RETRY_MS = 60_000;

/** `h`'s shell when it is up and idle; undefined otherwise (opening one when there is none). */
export function idleShell(f: Fleet, h: HostState): ShellChannel | undefined {
  const shell = h.shell;
  if (shell?.up) return shell.busy ? undefined : shell;
  if (h.shellOpening === undefined && Date.now() >= h.shellRetryAt && h.workDir !== '' && !f.stopped) {
    h.shellOpening = ShellChannel.open(h.conn, h.workDir).then(
      (opened) => {
        h.shellOpening = undefined;
        if (f.stopped) {
          opened.close();
          return;
        }
        opened.onClose = () => {
          if (h.shell === opened) h.shell = undefined;
        };
        h.shell = opened;
      },
      (err: unknown) => {
        h.shellOpening = undefined;
        h.shellRetryAt = Date.now() + RETRY_MS;
        f.logger.info(`[${f.name}] SSH host "${h.options.name}": no persistent shell (${err instanceof Error ? err.message : String(err)}); launches use an exec each.`);
      },
    );
  }
  return undefined;
}

/** Closes `h`'s shell (the executor stops, or the host was declared unreachable). */
export function closeShell(h: HostState): void {
  const shell = h.shell;
  h.shell = undefined;
  shell?.close();
}
