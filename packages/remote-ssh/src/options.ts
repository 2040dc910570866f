/**
 * Options of the SSH executor (types), and the check that refuses unknown keys in them: a
 * misspelt `workdir` would otherwise be dropped and the default used.
 */
import { checkKnownKeys, describeValue, CairnError } from '@cairn/core';
import type { WorkerMode } from './worker-policy.js';

/** One SSH host the executor may place steps on. */
export interface SshHostOptions {
  /** Name used in messages and recorded in job handles. */
  readonly name: string;
  /** Address to connect to. */
  readonly host: string;
  /** SSH port. @default 22 */
  readonly port?: number;
  /** Login user. */
  readonly user: string;
  /** Private key contents (PEM/OpenSSH). */
  readonly privateKey?: string | Buffer;
  /** Private key file; read at connect time. */
  readonly privateKeyPath?: string;
  /** ssh-agent socket path, or `true` for `$SSH_AUTH_SOCK`. */
  readonly agent?: string | boolean;
  /** OpenSSH known_hosts file the host key is verified against. @default ~/.ssh/known_hosts */
  readonly knownHostsPath?: string;
  /** What the host offers; steps never oversubscribe it. @default { cpus: 1, memoryGb: Infinity, gpus: [] } */
  readonly capacity?: { readonly cpus?: number; readonly memoryGb?: number; readonly gpus?: readonly number[] };
  /**
   * Remote directory for code bundles, job dirs and workers: absolute, or `~/…` under the login
   * user's home. It must be the login user's alone (owned by them, not writable by group or
   * others, no other user's directory above it): anything else is refused at `start` with
   * `CAIRN_UNSAFE_DIR`. Created with mode 0700 when missing. @default `~/.cache/cairn`
   */
  readonly workDir?: string;
  /** Node.js (≥ 20) on the host. @default 'node' */
  readonly nodePath?: string;
}

/** Options of {@link createSshExecutor}. */
export interface SshExecutorOptions {
  /** Registry name. @default 'ssh' */
  readonly name?: string;
  /** Hosts to place steps on. */
  readonly hosts: readonly SshHostOptions[];
  /** Verify host keys against known_hosts; `false` disables it (logged as a warning at start). @default true */
  readonly hostKeyVerification?: boolean;
  /** Hosts see the store at the runner's paths (NFS, Lustre…); otherwise outputs are staged by SFTP. @default false */
  readonly sharedFs?: boolean;
  /** Interval of the batched status check (one exec per host). @default 1000 */
  readonly pollIntervalMs?: number;
  /** A host unreachable this long makes its jobs `lost` (retried elsewhere). @default 30000 */
  readonly hostTimeoutMs?: number;
  /** Time between TERM and KILL on cancel. @default 5000 */
  readonly cancelGraceMs?: number;
  /**
   * A detached step whose runner has not checked on it for this long (no status check touched
   * its heartbeat: the runner died, or lost the host for good) is stopped on the host by its
   * wrapper's watchdog: TERM, then KILL after `cancelGraceMs`. A runner restarted within it
   * adopts the step. Keep it above `hostTimeoutMs` and above the time a restarted runner takes
   * to adopt its jobs (its lease's `staleMs` plus start-up). At least 2000 and three `pollIntervalMs`.
   * @default 600000
   */
  readonly orphanGraceMs?: number;
  /** Channels open at once per connection (OpenSSH's MaxSessions is 10 by default). @default 8 */
  readonly maxChannels?: number;
  /** The worker entry to deploy. @default @cairn/runner's `dist/worker-entry.js` */
  readonly workerEntry?: string;
  /**
   * Where steps run on a host: `auto` runs small steps in the host's persistent worker (one
   * long-lived Node process per host, no process start per step) and gives steps that ask for
   * GPUs or declare `timeLimit` ≥ 600 s their own detached process; `always` runs every step in
   * the worker; `never` gives every step its own detached process. A step overrides `auto` and
   * `always` with `resources.hints.sshWorker: true | false`. See the README.
   * @default 'auto'
   */
  readonly worker?: WorkerMode;
  /** A persistent worker with no connected executor and no running step exits after this long. @default 60000 */
  readonly workerIdleMs?: number;
}

const EXECUTOR_KEYS: ReadonlySet<string> = new Set(['name', 'hosts', 'hostKeyVerification', 'sharedFs', 'pollIntervalMs', 'hostTimeoutMs', 'cancelGraceMs', 'orphanGraceMs', 'maxChannels', 'workerEntry', 'worker', 'workerIdleMs']);
const HOST_KEYS: ReadonlySet<string> = new Set(['name', 'host', 'port', 'user', 'privateKey', 'privateKeyPath', 'agent', 'knownHostsPath', 'capacity', 'workDir', 'nodePath']);
const CAPACITY_KEYS: ReadonlySet<string> = new Set(['cpus', 'memoryGb', 'gpus']);

/**
 * Refuses unknown keys of the executor's, each host's and each capacity's options
 * (`CAIRN_UNKNOWN_OPTION`, naming the nearest known one), and a `workDir` that is neither
 * absolute nor `~/…` (`CAIRN_CONFIG`).
 */
export function checkSshOptions(options: SshExecutorOptions): void {
  if (typeof options !== 'object' || options === null) {
    throw new CairnError('CAIRN_CONFIG', `createSshExecutor(options): options must be an object with hosts, got ${describeValue(options)}.`);
  }
  checkKnownKeys(options, EXECUTOR_KEYS, 'createSshExecutor()');
  if (!Array.isArray(options.hosts)) return;
  options.hosts.forEach((h, i) => {
    if (typeof h !== 'object' || h === null) throw new CairnError('CAIRN_CONFIG', `createSshExecutor(): hosts[${i}] must be an object like { name, host, user, privateKeyPath }, got ${describeValue(h)}.`);
    const where = `createSshExecutor(): hosts[${i}]${typeof h.name === 'string' ? ` ("${h.name}")` : ''}`;
    checkKnownKeys(h, HOST_KEYS, where);
    if (typeof h.capacity === 'object' && h.capacity !== null) checkKnownKeys(h.capacity, CAPACITY_KEYS, `${where}.capacity`);
    const w = h.workDir;
    if (w !== undefined && (typeof w !== 'string' || !(w.startsWith('/') || w.startsWith('~/')))) {
      throw new CairnError('CAIRN_CONFIG', `${where}: workDir must be an absolute remote path or one under ~/, got ${describeValue(w)}.`);
    }
  });
}
