import { readFileSync } from 'node:fs';
import { CairnError } from '@cairn/core';
import ssh2 from 'ssh2';
import type { Client as SshClient, ClientChannel, ConnectConfig, SFTPWrapper } from 'ssh2';
import { checkHostKey, hostKeyError, loadKnownHosts } from './known-hosts.js';

const { Client } = ssh2;

/** How to reach and authenticate to one host (resolved options). */
export interface ConnectionTarget {
  /** Host name used in messages. */
  readonly name: string;
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly privateKey?: string | Buffer | undefined;
  readonly privateKeyPath?: string | undefined;
  readonly agent?: string | boolean | undefined;
  readonly knownHostsPath: string;
}

/** Output of one remote command. */
export interface ExecResult {
  /** Exit code (`null` when killed by a signal). */
  readonly code: number | null;
  readonly stdout: Buffer;
  readonly stderr: string;
}

/** Connection settings shared by all hosts. */
export interface ConnectionSettings {
  readonly hostKeyVerification: boolean;
  /** Connect/handshake timeout and keepalive budget. */
  readonly timeoutMs: number;
  /** Channels open at once on this connection (OpenSSH's MaxSessions defaults to 10). */
  readonly maxChannels: number;
}

class Semaphore {
  #free: number;
  readonly #waiters: (() => void)[] = [];
  constructor(n: number) {
    this.#free = n;
  }
  async acquire(): Promise<() => void> {
    if (this.#free > 0) this.#free--;
    else await new Promise<void>((r) => this.#waiters.push(r));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#waiters.shift();
      if (next) next();
      else this.#free++;
    };
  }
}

const BACKOFF_MIN_MS = 100;
const BACKOFF_MAX_MS = 5_000;

/**
 * One ssh2 connection to one host, reused for every exec channel and one SFTP session.
 * Reconnects on demand with exponential backoff; while backing off, calls fail fast with the
 * last error (the caller's poll loop decides when the host counts as lost). A refused host
 * key is fatal: no reconnects.
 */
export class HostConnection {
  readonly target: ConnectionTarget;
  readonly #settings: ConnectionSettings;
  readonly #channels: Semaphore;
  #client: SshClient | undefined;
  #connecting: Promise<SshClient> | undefined;
  #sftp: Promise<SFTPWrapper> | undefined;
  #lastError: Error | undefined;
  #backoffMs = 0;
  #nextAttemptAt = 0;
  #closed = false;
  /** Set when the host key was refused: the host is unusable until reconfigured. */
  fatal: CairnError | undefined;
  /** Called after each successful (re)connect. */
  onConnect: (() => void) | undefined;

  constructor(target: ConnectionTarget, settings: ConnectionSettings) {
    this.target = target;
    this.#settings = settings;
    this.#channels = new Semaphore(settings.maxChannels);
  }

  /**
   * A new, unopened connection to the same host with the same settings: for control commands
   * (cancel, kill) that must not depend on this one's channels, which may be dead on the host,
   * full, or closed by `stop` while the command is under way.
   */
  fresh(): HostConnection {
    return new HostConnection(this.target, this.#settings);
  }

  /** True while a connection is established. */
  get connected(): boolean {
    return this.#client !== undefined;
  }

  /** The established client, connecting (or reconnecting) when needed. */
  ready(): Promise<SshClient> {
    if (this.fatal) return Promise.reject(this.fatal);
    if (this.#closed) return Promise.reject(new CairnError('CAIRN_REMOTE', `SSH host "${this.target.name}": the executor was stopped.`));
    if (this.#client) return Promise.resolve(this.#client);
    if (this.#connecting) return this.#connecting;
    if (Date.now() < this.#nextAttemptAt) return Promise.reject(this.#unreachable(this.#lastError));
    this.#connecting = this.#connect().finally(() => {
      this.#connecting = undefined;
    });
    return this.#connecting;
  }

  #unreachable(cause: Error | undefined): CairnError {
    if (cause && (cause as CairnError).code === 'CAIRN_REMOTE') return cause as CairnError;
    const t = this.target;
    return new CairnError('CAIRN_REMOTE', `SSH host "${t.name}" (${t.user}@${t.host}:${t.port}) is unreachable: ${cause?.message ?? 'not connected'}. Check the host is up and the options (port, user, key).`, {
      cause,
      retryable: true,
    });
  }

  #connect(): Promise<SshClient> {
    const t = this.target;
    return new Promise<SshClient>((resolve, reject) => {
      const client = new Client();
      let refused: CairnError | undefined;
      let settled = false;
      const config: ConnectConfig = {
        host: t.host,
        port: t.port,
        username: t.user,
        readyTimeout: this.#settings.timeoutMs,
        keepaliveInterval: Math.max(500, Math.floor(this.#settings.timeoutMs / 4)),
        keepaliveCountMax: 3,
      };
      try {
        if (t.privateKey !== undefined) config.privateKey = t.privateKey;
        else if (t.privateKeyPath !== undefined) config.privateKey = readFileSync(t.privateKeyPath);
        if (t.agent) config.agent = t.agent === true ? process.env.SSH_AUTH_SOCK : t.agent;
      } catch (cause) {
        reject(new CairnError('CAIRN_CONFIG', `SSH host "${t.name}": cannot read privateKeyPath ${t.privateKeyPath}: ${(cause as Error).message}.`, { cause }));
        return;
      }
      if (this.#settings.hostKeyVerification) {
        const entries = loadKnownHosts(t.knownHostsPath);
        config.hostVerifier = (key: Buffer) => {
          const check = checkHostKey(entries, t.host, t.port, key);
          if (check.ok) return true;
          refused = hostKeyError(t.name, t.host, t.port, t.knownHostsPath, key, check.problem);
          return false;
        };
      }
      client.once('ready', () => {
        settled = true;
        this.#client = client;
        this.#lastError = undefined;
        this.#backoffMs = 0;
        this.#nextAttemptAt = 0;
        resolve(client);
        this.onConnect?.();
      });
      client.on('error', (err: Error) => {
        if (settled) return; // a later error is followed by 'close'
        settled = true;
        client.destroy();
        if (refused) {
          this.fatal = refused;
          reject(refused);
          return;
        }
        this.#lastError = err;
        this.#backoffMs = Math.min(BACKOFF_MAX_MS, this.#backoffMs === 0 ? BACKOFF_MIN_MS : this.#backoffMs * 2);
        this.#nextAttemptAt = Date.now() + this.#backoffMs;
        reject(this.#unreachable(err));
      });
      client.on('close', () => {
        if (this.#client === client) {
          this.#client = undefined;
          this.#sftp = undefined;
          this.#lastError = new Error('connection closed');
        }
        if (!settled) {
          settled = true;
          reject(this.#unreachable(new Error('connection closed during the handshake')));
        }
      });
      client.connect(config);
    });
  }

  /**
   * Runs one command on its own channel and collects its output. `stdin` is written and
   * closed. Past `timeoutMs` without an answer the connection is presumed dead and dropped.
   */
  async exec(command: string, options: { stdin?: Uint8Array; timeoutMs?: number } = {}): Promise<ExecResult> {
    const release = await this.#channels.acquire();
    try {
      const client = await this.ready();
      return await new Promise<ExecResult>((resolve, reject) => {
        const timeoutMs = options.timeoutMs ?? 60_000;
        const timer = setTimeout(() => {
          reject(this.#unreachable(new Error(`no answer to a command within ${timeoutMs} ms`)));
          this.drop(client);
        }, timeoutMs);
        client.exec(command, (err, stream: ClientChannel) => {
          if (err) {
            clearTimeout(timer);
            reject(this.#unreachable(err));
            return;
          }
          const out: Buffer[] = [];
          const errOut: Buffer[] = [];
          stream.on('data', (d: Buffer) => out.push(d));
          stream.stderr.on('data', (d: Buffer) => errOut.push(d));
          stream.on('close', (code: number | null) => {
            clearTimeout(timer);
            resolve({ code: code ?? null, stdout: Buffer.concat(out), stderr: Buffer.concat(errOut).toString('utf8') });
          });
          stream.end(options.stdin ? Buffer.from(options.stdin) : undefined);
        });
      });
    } finally {
      release();
    }
  }

  /**
   * Opens a long-lived command channel (log streaming). The caller must consume both
   * streams; `release` frees the channel slot when done.
   */
  async stream(command: string): Promise<{ channel: ClientChannel; release: () => void }> {
    const release = await this.#channels.acquire();
    try {
      const client = await this.ready();
      const channel = await new Promise<ClientChannel>((resolve, reject) => client.exec(command, (err, ch) => (err ? reject(this.#unreachable(err)) : resolve(ch))));
      return { channel, release };
    } catch (err) {
      release();
      throw err;
    }
  }

  /** The connection's SFTP session (opened once per connection). */
  sftp(): Promise<SFTPWrapper> {
    if (this.#sftp) return this.#sftp;
    const p = this.ready().then(
      (client) =>
        new Promise<SFTPWrapper>((resolve, reject) => {
          client.sftp((err, sftp) => (err ? reject(this.#unreachable(err)) : resolve(sftp)));
        }),
    );
    this.#sftp = p;
    p.catch(() => {
      if (this.#sftp === p) this.#sftp = undefined;
    });
    return p;
  }

  /** Drops the current connection (presumed dead); the next call reconnects. */
  drop(client?: SshClient): void {
    const c = client ?? this.#client;
    if (!c) return;
    if (this.#client === c) {
      this.#client = undefined;
      this.#sftp = undefined;
    }
    c.destroy();
  }

  /** Closes for good. */
  close(): void {
    this.#closed = true;
    this.drop();
  }
}
