/**
 * A real OpenSSH server on loopback for tests and benchmarks (see /work/shared/INFRA.md).
 *
 * `startSshd()` makes a temp dir with a host key, a client key, `authorized_keys`,
 * `known_hosts` and its own `sshd_config`, ensures a dedicated non-root login user exists,
 * runs `sshd -D -e -f CONFIG` in the foreground (its pid is ours to stop) and waits until
 * it listens. Needs root (sshd drops privileges to the login user).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Options of {@link startSshd}. */
export interface SshdOptions {
  /** Login user (created with `useradd -M -s /bin/bash -p '*'` when missing). @default 'cairn-ssh-test' */
  user?: string;
  /** TCP port on 127.0.0.1. @default a free port */
  port?: number;
  /** sshd's `LogLevel` (VERBOSE logs each session's start in {@link SshdInstance.log}). @default INFO */
  logLevel?: 'INFO' | 'VERBOSE';
}

/** A running sshd. */
export interface SshdInstance {
  /** Always `127.0.0.1`. */
  readonly host: string;
  /** Listening port. */
  readonly port: number;
  /** Login user. */
  readonly user: string;
  /** Client private key (ed25519, no passphrase), readable by the current process. */
  readonly privateKeyPath: string;
  /** A `known_hosts` file with this server's key as `[127.0.0.1]:PORT`. */
  readonly knownHostsPath: string;
  /** The server's public host key line (`ssh-ed25519 AAAA…`). */
  readonly hostPublicKey: string;
  /** A directory owned by the login user, for remote work dirs. */
  readonly workDir: string;
  /** The login user's ids and home (where the executor's default work dir `~/.cache/cairn` lives). */
  readonly account: LocalUser;
  /** The temp dir holding everything above. */
  readonly dir: string;
  /** The listener's pid. */
  readonly pid: number;
  /** sshd's stderr so far (`-e`), for diagnosing failures. */
  log(): string;
  /** Kills the per-connection session processes (drops every client), keeping the listener. */
  killSessions(): void;
  /** Stops the listener and its sessions and removes the temp dir. Safe to call twice. */
  stop(): Promise<void>;
}

export const SSHD_PATH = '/usr/sbin/sshd';

/** True when OpenSSH's server is installed. */
export function sshdAvailable(): boolean {
  return existsSync(SSHD_PATH) && existsSync('/usr/bin/ssh-keygen');
}

/** A local user: ids and home directory. */
export interface LocalUser {
  readonly user: string;
  readonly uid: number;
  readonly gid: number;
  /** The home directory (created, owned by the user, mode 0700, when missing). */
  readonly home: string;
}

/**
 * Ensures a local user exists (created with `useradd -M -s /bin/bash -p '*'` when missing) and has
 * its home directory (the SSH executor's default work dir is under it).
 */
export function ensureUser(user: string): LocalUser {
  const id = (flag: string) => Number(execFileSync('id', [flag, user], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim());
  let uid: number;
  let gid: number;
  try {
    uid = id('-u');
    gid = id('-g');
  } catch {
    // '*' (not '!'): a locked account is refused by sshd even with a key.
    execFileSync('useradd', ['-M', '-s', '/bin/bash', '-p', '*', user], { stdio: 'pipe' });
    uid = id('-u');
    gid = id('-g');
  }
  const home = execFileSync('getent', ['passwd', user], { encoding: 'utf8' }).trim().split(':')[5] || `/home/${user}`;
  if (!existsSync(home)) {
    mkdirSync(home, { recursive: true, mode: 0o700 });
    chownSync(home, uid, gid);
    chmodSync(home, 0o700);
  }
  return { user, uid, gid, home };
}

/**
 * A second local user that never logs in: the attacker of the shared-host tests, who plants
 * files and directories where the login user's runs might use them.
 */
export const OTHER_USER = 'cairn-ssh-other';

/**
 * Runs a shell script as `user` (we are root), with `args` as `$1`, `$2`…; returns its stdout.
 * Throws (with its stderr) when it exits non-zero.
 */
export function runAs(user: LocalUser, script: string, args: readonly string[] = []): string {
  return execFileSync('sh', ['-c', script, 'cairn-as', ...args], { uid: user.uid, gid: user.gid, cwd: '/', env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: user.home }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** Pids whose parent is `pid` (the listener forks one process per connection). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Field 4 (ppid) follows the parenthesised command name, which may contain spaces.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(entry));
    } catch {
      // The process exited while we looked.
    }
  }
  return out;
}

function killPid(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Already gone.
  }
}

/** Starts an sshd on 127.0.0.1 with its own keys and config. */
export async function startSshd(options: SshdOptions = {}): Promise<SshdInstance> {
  const user = options.user ?? 'cairn-ssh-test';
  if (!sshdAvailable()) throw new Error(`${SSHD_PATH} is not installed: run tools/testenv/install-ssh.sh`);
  const account = ensureUser(user);
  const { uid, gid } = account;
  mkdirSync('/run/sshd', { recursive: true });
  const dir = mkdtempSync(join(tmpdir(), 'cairn-sshd-'));
  chmodSync(dir, 0o755); // the login user reads authorized_keys through it
  const keygen = (file: string) => execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'cairn-test', '-f', file], { stdio: 'pipe' });
  keygen(join(dir, 'ssh_host_ed25519_key'));
  keygen(join(dir, 'client_key'));
  const authorized = join(dir, 'authorized_keys');
  writeFileSync(authorized, readFileSync(join(dir, 'client_key.pub')));
  chmodSync(authorized, 0o644);
  const workDir = join(dir, 'work');
  mkdirSync(workDir);
  chownSync(workDir, uid, gid);
  const port = options.port ?? (await freePort());
  const hostPublicKey = readFileSync(join(dir, 'ssh_host_ed25519_key.pub'), 'utf8').trim().split(/\s+/).slice(0, 2).join(' ');
  const knownHostsPath = join(dir, 'known_hosts');
  writeFileSync(knownHostsPath, `[127.0.0.1]:${port} ${hostPublicKey}\n`);
  const config = join(dir, 'sshd_config');
  writeFileSync(
    config,
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${join(dir, 'ssh_host_ed25519_key')}`,
      `PidFile ${join(dir, 'sshd.pid')}`,
      `AuthorizedKeysFile ${authorized}`,
      `AllowUsers ${user}`,
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'UsePAM no',
      'StrictModes no',
      'UseDNS no',
      'PrintMotd no',
      'Subsystem sftp internal-sftp',
      `LogLevel ${options.logLevel ?? 'INFO'}`,
      '',
    ].join('\n'),
  );
  execFileSync(SSHD_PATH, ['-t', '-f', config], { stdio: 'pipe' });
  const child: ChildProcess = spawn(SSHD_PATH, ['-D', '-e', '-f', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr?.on('data', (d: Buffer) => {
    log += d.toString('utf8');
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const pid = child.pid as number;
  const deadline = Date.now() + 10_000;
  while (!(await canConnect(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      killPid(pid, 'SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`sshd did not start on port ${port}:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  let stopped = false;
  const killSessions = () => {
    for (const c of childrenOf(pid)) killPid(c, 'SIGKILL');
  };
  return {
    host: '127.0.0.1',
    port,
    user,
    privateKeyPath: join(dir, 'client_key'),
    knownHostsPath,
    hostPublicKey,
    workDir,
    account,
    dir,
    pid,
    log: () => log,
    killSessions,
    async stop() {
      if (stopped) return;
      stopped = true;
      // Sessions first: once the listener is gone they are reparented and no longer found as its children.
      killSessions();
      killPid(pid, 'SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))]);
      killPid(pid, 'SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * True when a real sshd can be used. Without OpenSSH's server, tests skip with a message naming
 * `what` — except in CI (`CI` set), where a missing sshd is a failure.
 */
export function sshdOrSkip(what: string): boolean {
  if (sshdAvailable()) return true;
  if (process.env.CI) throw new Error(`CI: ${SSHD_PATH} is missing; run tools/testenv/install-ssh.sh before ${what}.`);
  console.warn(`SKIPPING ${what}: OpenSSH server not installed (run tools/testenv/install-ssh.sh).`);
  return false;
}

/** Host options (the shape of @cairn/remote-ssh's `SshHostOptions`) for one test sshd. */
export function testHostOptions(s: SshdInstance, name: string, extra: Record<string, unknown> = {}) {
  return {
    name,
    host: s.host,
    port: s.port,
    user: s.user,
    privateKeyPath: s.privateKeyPath,
    knownHostsPath: s.knownHostsPath,
    workDir: join(s.workDir, name),
    capacity: { cpus: 4, memoryGb: 16, gpus: [] as number[] },
    nodePath: process.execPath,
    ...extra,
  };
}
