/**
 * The executor's end of a host's persistent worker: one long-lived exec channel running
 * {@link WORKER_SCRIPT} (starts the worker when none answers, then relays to its socket). Jobs go
 * down the channel's stdin as JSON lines; completions come back on its stdout. The channel
 * closing means the worker died or the connection dropped: the executor then falls back to the
 * batched status check for the jobs it was waiting for, which tells the two apart.
 */
import { CairnError } from '@cairn/core';
import type { ClientChannel } from 'ssh2';
import type { HostConnection } from './connection.js';
import { shScript } from './quote.js';
import { CODE_MISMATCH_EXIT, WORKER_SCRIPT } from './remote-script.js';
import { RELAY_NO_WORKER, WORKER_PROTOCOL, type FromWorker, type ToWorker } from './runtime/protocol.js';

/** How to start and reach one host's worker. */
export interface WorkerTarget {
  /** `<workDir>/workers/<bundle hash>`: pid, sock, worker.log. */
  readonly dir: string;
  /** Node on the host. */
  readonly nodePath: string;
  /** The uploaded worker bundle (`<workDir>/code/<hash>/ssh-worker.mjs`). */
  readonly entry: string;
  /** Its SHA-256: the start script checks the file against it before running it. */
  readonly entrySha256: string;
  /** The worker exits after this long without executors or steps. */
  readonly idleMs: number;
}

const HELLO_TIMEOUT_MS = 30_000;

export class WorkerLink {
  readonly target: WorkerTarget;
  /** The worker's pid (also the `pid` of its jobs). */
  readonly pid: number;
  readonly #channel: ClientChannel;
  #up = true;
  readonly #conn: HostConnection;
  /** Called for every message after `hello`. */
  onMessage: (msg: FromWorker) => void = () => {};
  /** Called once when the channel closes. */
  onClose: () => void = () => {};

  private constructor(conn: HostConnection, target: WorkerTarget, pid: number, channel: ClientChannel) {
    this.#conn = conn;
    this.target = target;
    this.pid = pid;
    this.#channel = channel;
  }

  /**
   * True until the channel closes, and while its connection is up: when a host dies, ssh2 may
   * drop the connection without closing its channels, and the executor must poll again.
   */
  get up(): boolean {
    return this.#up && this.#conn.connected;
  }

  /** Starts the worker if needed and connects to it. */
  static async open(conn: HostConnection, target: WorkerTarget): Promise<WorkerLink> {
    const { channel, release } = await conn.stream(shScript(WORKER_SCRIPT, [target.dir, target.nodePath, target.entry, String(target.idleMs), target.entrySha256]));
    return new Promise<WorkerLink>((resolve, reject) => {
      let link: WorkerLink | undefined;
      let stderr = '';
      let rest = '';
      let exitCode: number | null = null;
      const fail = (why: string) => {
        clearTimeout(timer);
        const err = new CairnError('CAIRN_REMOTE', `SSH host "${conn.target.name}": the persistent worker in ${target.dir} did not answer (${why}). Check nodePath (${target.nodePath}) and that workDir is writable, or set worker: 'never'.${stderr.trim() ? `\nIts output:\n${stderr.trim()}` : ''}`, {
          retryable: true,
        });
        reject(Object.assign(err, { workerVanished: exitCode === RELAY_NO_WORKER, codeMismatch: exitCode === CODE_MISMATCH_EXIT }));
        channel.close();
      };
      const timer = setTimeout(() => fail(`no hello within ${HELLO_TIMEOUT_MS} ms`), HELLO_TIMEOUT_MS);
      channel.stderr.on('data', (d: Buffer) => {
        stderr = (stderr + d.toString('utf8')).slice(-4000);
      });
      channel.on('exit', (code: number | null) => {
        exitCode = code;
      });
      channel.on('data', (d: Buffer) => {
        rest += d.toString('utf8');
        let nl: number;
        while ((nl = rest.indexOf('\n')) >= 0) {
          const text = rest.slice(0, nl);
          rest = rest.slice(nl + 1);
          let msg: FromWorker;
          try {
            msg = JSON.parse(text) as FromWorker;
          } catch {
            continue; // not a protocol line
          }
          if (link) link.onMessage(msg);
          else if (msg.t === 'hello') {
            if (msg.protocol !== WORKER_PROTOCOL) {
              fail(`it speaks protocol ${msg.protocol}, this executor ${WORKER_PROTOCOL}`);
              return;
            }
            clearTimeout(timer);
            link = new WorkerLink(conn, target, msg.pid, channel);
            resolve(link);
          }
        }
      });
      channel.on('close', () => {
        release();
        if (!link) fail(`the channel closed, exit ${exitCode ?? 'unknown'}`);
        else if (link.#up) {
          link.#up = false;
          link.onClose();
        }
      });
    });
  }

  /** Sends one message; false when the channel is closed. */
  send(msg: ToWorker): boolean {
    if (!this.#up) return false;
    this.#channel.write(`${JSON.stringify(msg)}\n`);
    return true;
  }

  /** Closes the channel (the worker keeps running and exits when idle). */
  close(): void {
    if (!this.#up) return;
    this.#channel.end();
    this.#channel.close();
  }
}
