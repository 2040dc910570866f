/**
 * Control commands (cancel, kill) on a connection of their own, retried with backoff for up to
 * `hostTimeoutMs`. They must not depend on the step's channel or on the executor's shared
 * connection: on the host its sshd session may be dead (the connection dropped, a session killed)
 * while the runner has not noticed yet, its channels may all be busy, and `stop()` closes it when
 * the run ends, which on Ctrl-C or `timeoutMs` is right after the cancel was asked for. The
 * commands under way are tracked on the fleet (`Fleet.control`), and `stop()` waits for them.
 */
import { CairnError } from '@cairn/core';
import type { ExecResult, HostConnection } from './connection.js';
import type { Fleet, HostState } from './model.js';
import { shScript } from './quote.js';

const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 2000;

/** A private connection to one host for control commands; `close` it when done. */
export class ControlSession {
  readonly #f: Fleet;
  readonly #h: HostState;
  #conn: HostConnection | undefined;

  constructor(f: Fleet, h: HostState) {
    this.#f = f;
    this.#h = h;
  }

  /**
   * Runs `script` with `args` (quoted), retrying on a new connection with backoff while the host
   * does not answer, for up to `hostTimeoutMs`. A script that ran and failed is not retried.
   */
  async run(script: string, args: readonly string[]): Promise<ExecResult> {
    const deadline = Date.now() + this.#f.opts.hostTimeoutMs;
    let wait = FIRST_RETRY_MS;
    for (;;) {
      this.#conn ??= this.#h.conn.fresh();
      let r: ExecResult;
      try {
        r = await this.#conn.exec(shScript(script, args), { timeoutMs: Math.min(this.#f.opts.hostTimeoutMs, 20_000) });
      } catch (err) {
        this.#conn.close();
        this.#conn = undefined;
        if (this.#h.conn.fatal || Date.now() + wait > deadline) throw err;
        await new Promise((r) => setTimeout(r, wait));
        wait = Math.min(MAX_RETRY_MS, wait * 2);
        continue;
      }
      if (r.code !== 0) throw new CairnError('CAIRN_REMOTE', `SSH host "${this.#h.options.name}": a control command failed (exit ${r.code}): ${r.stderr.trim()}`, { retryable: true });
      return r;
    }
  }

  close(): void {
    this.#conn?.close();
    this.#conn = undefined;
  }
}

/** Registers a control command under way: `stop()` waits for it before closing the hosts. */
export function tracked<T>(f: Fleet, p: Promise<T>): Promise<T> {
  const settled = p.then(
    () => {},
    () => {},
  );
  f.control.add(settled);
  void settled.then(() => f.control.delete(settled));
  return p;
}

/** The pids a signal or liveness script printed (those still alive). */
export function pidsIn(r: ExecResult): string[] {
  return r.stdout.toString('utf8').split('\n').filter((l) => /^\d+$/.test(l));
}
