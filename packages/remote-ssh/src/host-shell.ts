/**
 * Each host's persistent shell as the executor uses it (the channel itself is shell-channel.ts):
 * opened in the background on first use, so that use goes on as an exec meanwhile; a launch or a
 * status check takes it when it is up and idle. A shell that could not open (no `mktemp`,
 * `base64` or `awk` on the host, a full `MaxSessions`) is tried again a minute later; until then
 * both are execs, as before.
 */
import type { ExecResult } from './connection.js';
import type { Fleet, HostState } from './model.js';
import { ShellChannel } from './shell-channel.js';

/**
 * Runs `command` on `h` down its persistent shell when that is up and idle, else as an exec of
 * its own. A launch (bench row "SSH, one at a time") and the status check of every tick go this
 * way: a host running long jobs polled each interval is not asked for a new sshd session (a
 * forked process, its log lines, PAM) each time. The two answer alike (shell-channel.test.ts),
 * a timeout included: a shell past it is closed, and the next command is an exec.
 */
export function runOnHost(f: Fleet, h: HostState, command: string, stdin: Uint8Array | undefined, timeoutMs: number): Promise<ExecResult> {
  const shell = idleShell(f, h);
  return shell !== undefined ? shell.run(command, stdin, timeoutMs) : h.conn.exec(command, { stdin, timeoutMs });
}

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
