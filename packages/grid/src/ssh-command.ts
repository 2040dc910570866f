/**
 * A {@link CommandRunner} that runs each argv on a login node through the OpenSSH client
 * (`ssh`), so the CLI transports of every scheduler work from a laptop or a CI box outside the
 * cluster. It uses the user's own ssh setup (keys, agent, `~/.ssh/config`, jump hosts); each
 * argument is quoted for the remote shell, never joined into an unquoted string.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { positiveInt, type CommandResult, type CommandRunner } from './command.js';
import { controlDir, removeControlDir, type ControlDir } from './control-dir.js';
import { createLimiter } from './limit.js';
import { shQuote } from './quote.js';

/** Options of {@link sshCommandRunner}. */
export interface SshCommandRunnerOptions {
  /** The login node (a host name, or a `Host` of `~/.ssh/config`). */
  readonly host: string;
  /** Remote user. @default ssh's default */
  readonly user?: string;
  /** Port. @default ssh's default (22) */
  readonly port?: number;
  /** Private key file (`-i`). */
  readonly identityFile?: string;
  /** `known_hosts` file to check the host key against (`UserKnownHostsFile`). @default ssh's default */
  readonly knownHostsFile?: string;
  /** Environment set on the remote side for every command (`env K=V …`), e.g. `{ SLURM_CONF }`. */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * Keep one connection open and run every command through it (`ControlMaster`), closed by
   * `close()`. Its socket lives in a private directory ({@link SshCommandRunnerOptions.controlDir}).
   * @default true
   */
  readonly multiplex?: boolean;
  /**
   * Directory for the multiplexing socket: it must be this user's own real directory (not a
   * symlink) with no access for group or others, and is created 0700 when missing; anything else
   * is refused with `CAIRN_UNSAFE_DIR` (another user able to place the socket could answer every
   * command and read its environment). Keep its path short: a socket path holds at most 107 bytes.
   * @default a fresh 0700 directory (`mkdtemp`) under `$XDG_RUNTIME_DIR` or the system temp directory, removed by `close()`
   */
  readonly controlDir?: string;
  /** Extra `-o` options, e.g. `{ ConnectTimeout: '10' }`. */
  readonly sshOptions?: Readonly<Record<string, string>>;
  /** Kills a command that runs longer than this. @default 60000 */
  readonly timeoutMs?: number;
  /** The ssh binary. @default 'ssh' */
  readonly sshPath?: string;
  /** Commands running at once (at most sshd's `MaxSessions`, 10 by default, over one shared connection). @default 10 */
  readonly maxInFlight?: number;
}

/** The remote command line for `argv` with `env` (quoted for the remote shell). */
export function remoteCommand(argv: readonly string[], env: Readonly<Record<string, string>> = {}): string {
  const vars = Object.entries(env).map(([k, v]) => {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) throw new TypeError(`sshCommandRunner: ${JSON.stringify(k)} is not an environment variable name`);
    return shQuote(`${k}=${v}`);
  });
  return [...(vars.length > 0 ? ['env', ...vars] : []), ...argv.map(shQuote)].join(' ');
}

/** An ssh {@link CommandRunner} for a login node. */
export interface SshCommandRunner extends CommandRunner {
  /** The directory holding the multiplexing socket once the first command ran; `undefined` before, after `close()`, or without `multiplex`. */
  readonly controlDir: string | undefined;
  /** Ends the shared connection and removes the socket's temporary directory. */
  close(): Promise<void>;
}

/** Runs commands on a login node over ssh. `close()` ends the shared connection. */
export function sshCommandRunner(options: SshCommandRunnerOptions): SshCommandRunner {
  const ssh = options.sshPath ?? 'ssh';
  const limit = createLimiter(positiveInt('sshCommandRunner: maxInFlight', options.maxInFlight, 10));
  const multiplex = options.multiplex ?? true;
  // Made on first use (a runner that never runs a command leaves nothing behind); see control-dir.ts.
  let control: Promise<ControlDir> | undefined;
  let ready: ControlDir | undefined;
  const controlReady = (): Promise<ControlDir | undefined> => {
    if (!multiplex) return Promise.resolve(undefined);
    control ??= controlDir(options.controlDir).then((d) => (ready = d));
    return control;
  };
  const base = (dir: ControlDir | undefined): string[] => {
    const args = ['-o', 'BatchMode=yes', '-T'];
    if (options.port !== undefined) args.push('-p', String(options.port));
    if (options.identityFile) args.push('-i', options.identityFile, '-o', 'IdentitiesOnly=yes');
    if (options.knownHostsFile) args.push('-o', `UserKnownHostsFile=${options.knownHostsFile}`, '-o', 'StrictHostKeyChecking=yes');
    if (dir) args.push('-o', 'ControlMaster=auto', '-o', `ControlPath=${join(dir.path, '%C')}`, '-o', 'ControlPersist=60');
    for (const [k, v] of Object.entries(options.sshOptions ?? {})) args.push('-o', `${k}=${v}`);
    if (options.user) args.push('-l', options.user);
    return args;
  };
  const exec = (args: string[], input?: string): Promise<CommandResult> =>
    new Promise((resolve, reject) => {
      const child = execFile(ssh, args, { timeout: options.timeoutMs ?? 60_000, maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' }, (err, stdout, stderr) => {
        if (!err) return resolve({ code: 0, stdout, stderr });
        const e = err as NodeJS.ErrnoException & { code?: unknown; killed?: boolean };
        if (e.code === 'ENOENT') return reject(new Error(`${ssh} was not found: install the OpenSSH client`));
        const code: number = typeof e.code === 'number' ? e.code : 1;
        // 255 is ssh's own failure (connection, authentication): the command never ran.
        if (code === 255) return reject(new Error(`ssh to ${options.host} failed: ${stderr.trim() || 'exit 255'}`));
        resolve({ code, stdout, stderr: stderr + (e.killed ? `\nssh: killed (timeout)` : '') });
      });
      child.stdin?.end(input);
    });
  return {
    get controlDir() {
      return ready?.path;
    },
    async run(argv, runOptions = {}) {
      if (argv.length === 0) throw new TypeError('CommandRunner.run: argv is empty');
      const command = remoteCommand(argv, { ...options.env, ...runOptions.env });
      const dir = await controlReady();
      return limit(() => exec([...base(dir), options.host, '--', command], runOptions.input));
    },
    async close() {
      const pending = control;
      control = undefined;
      ready = undefined;
      const dir = await pending?.catch(() => undefined);
      if (!dir) return;
      await exec([...base(dir), '-O', 'exit', options.host]).catch(() => undefined);
      removeControlDir(dir);
    },
  };
}
