/**
 * A real single-node Slurm for tests (see /work/shared/INFRA.md, "A real single-node Slurm").
 *
 * `startSlurm()` makes a temp dir with its own munge key, JWT key and `slurm.conf`, starts
 * munged → slurmctld → slurmd → slurmrestd (JWT, on 127.0.0.1:<free port>) as child
 * processes of this process, waits for each, and returns what clients need. `stop()` ends
 * exactly those processes by pid and removes the directory. Every port is picked free, so
 * several harnesses (or test files) can run at once.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { freePort } from './ports.js';

/** A running test cluster. */
export interface SlurmCluster {
  /** Environment every Slurm client needs (`sbatch`, `squeue`, …). */
  readonly env: { readonly SLURM_CONF: string };
  /** Path of the generated `slurm.conf`. */
  readonly confPath: string;
  /** The cluster's temp dir (config, state, logs). */
  readonly dir: string;
  /** Job-completion log (`JobCompLoc`), read by `sacct -c`. */
  readonly jobCompLog: string;
  /** slurmrestd base URL, e.g. `http://127.0.0.1:40123`. */
  readonly restUrl: string;
  /** JWT for {@link restUser} (lifespan one hour). */
  readonly restToken: string;
  /** User name the token was issued for. */
  readonly restUser: string;
  /** CPUs the node offers. */
  readonly cpus: number;
  /** Stops every daemon this harness started (by pid) and removes the temp dir. */
  stop(): Promise<void>;
}

/** Options of {@link startSlurm}. */
export interface StartSlurmOptions {
  /** CPUs the node declares (more than the machine has is fine: `config_overrides`). @default 16 */
  readonly cpus?: number;
  /** `MinJobAge`: seconds finished jobs stay visible to `squeue`. @default 300 */
  readonly minJobAge?: number;
  /** Start slurmrestd too. @default true */
  readonly rest?: boolean;
  /** Keep the temp dir after `stop()` (debugging). @default false */
  readonly keepDir?: boolean;
  /**
   * Partition-priority preemption: a job in the partition `urgent` (PriorityTier 10) that needs
   * the node cancels the `debug` (PriorityTier 1) jobs in its way, which end `PREEMPTED`. @default false
   */
  readonly preemption?: boolean;
}

const SBIN = ['/usr/sbin', '/usr/bin', '/sbin', '/bin'];

function which(name: string): string | undefined {
  for (const dir of [...(process.env.PATH ?? '').split(':'), ...SBIN]) {
    if (dir && existsSync(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

/** Names of the Slurm/munge binaries that are missing (empty when Slurm can run here). */
export function missingSlurmBinaries(): string[] {
  return ['sbatch', 'squeue', 'scancel', 'scontrol', 'sinfo', 'slurmctld', 'slurmd', 'slurmrestd', 'munged', 'mungekey'].filter((b) => !which(b));
}

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { env, timeout: 10_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : 1) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number, diag: () => Promise<string>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`startSlurm: timed out after ${timeoutMs} ms waiting for ${what}.\n${await diag()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Starts a private single-node Slurm. Throws (with daemon logs) if any daemon fails to come up. */
export async function startSlurm(options: StartSlurmOptions = {}): Promise<SlurmCluster> {
  const missing = missingSlurmBinaries();
  if (missing.length > 0) {
    throw new Error(`startSlurm: missing ${missing.join(', ')}; run tools/testenv/install-slurm.sh.`);
  }
  const cpus = options.cpus ?? 16;
  const dir = await mkdtemp(join(tmpdir(), 'cairn-slurm-'));
  const children: ChildProcess[] = [];
  let clientEnv: NodeJS.ProcessEnv | undefined;
  const stop = async (): Promise<void> => {
    // Job processes (slurmstepd and below) outlive slurmd: cancel every job of this private
    // cluster first and wait for them to go (KillWait is 2 s).
    if (clientEnv) {
      const env = clientEnv;
      await run(which('scancel') as string, ['--partition=debug'], env);
      if (options.preemption) await run(which('scancel') as string, ['--partition=urgent'], env);
      await waitFor(
        'jobs to end',
        async () => (await run(which('squeue') as string, ['-h', '-t', 'PENDING,RUNNING,COMPLETING,SUSPENDED', '-o', '%i'], env)).stdout.trim() === '',
        10_000,
        async () => '',
      ).catch(() => undefined);
    }
    // Reverse start order; SIGTERM, then SIGKILL after a short grace.
    for (const child of children.reverse()) {
      if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) continue;
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(timer);
    }
    if (!options.keepDir) await rm(dir, { recursive: true, force: true });
  };
  try {
    for (const d of ['run', 'state', 'spool', 'log']) await mkdir(join(dir, d), { recursive: true });
    await chmod(dir, 0o755);
    await chmod(join(dir, 'run'), 0o755); // munge's socket directory must be world-executable
    const mungeKey = join(dir, 'munge.key');
    const socket = join(dir, 'run', 'munge.socket.2');
    const jwtKey = join(dir, 'jwt_hs256.key');
    await writeFile(jwtKey, randomBytes(32), { mode: 0o600 });
    const mk = await run(which('mungekey') as string, ['--create', `--keyfile=${mungeKey}`], process.env);
    if (mk.code !== 0) throw new Error(`startSlurm: mungekey failed: ${mk.stderr}`);
    await chmod(mungeKey, 0o400);

    const [ctldPort, slurmdPort, restPort] = [await freePort(), await freePort(), await freePort()];
    const confPath = join(dir, 'slurm.conf');
    const jobCompLog = join(dir, 'log', 'jobcomp.txt');
    await writeFile(
      confPath,
      [
        'ClusterName=cairn',
        'SlurmctldHost=localhost',
        `SlurmctldPort=${ctldPort}`,
        `SlurmdPort=${slurmdPort}`,
        'SlurmUser=root',
        'SlurmdUser=root',
        'AuthType=auth/munge',
        `AuthInfo=socket=${socket}`,
        'CredType=cred/munge',
        'AuthAltTypes=auth/jwt',
        `AuthAltParameters=jwt_key=${jwtKey}`,
        `StateSaveLocation=${join(dir, 'state')}`,
        `SlurmdSpoolDir=${join(dir, 'spool')}`,
        `SlurmctldPidFile=${join(dir, 'run', 'slurmctld.pid')}`,
        `SlurmdPidFile=${join(dir, 'run', 'slurmd.pid')}`,
        `SlurmctldLogFile=${join(dir, 'log', 'slurmctld.log')}`,
        `SlurmdLogFile=${join(dir, 'log', 'slurmd.log')}`,
        'ProctrackType=proctrack/linuxproc',
        'TaskPlugin=task/none',
        'JobAcctGatherType=jobacct_gather/none',
        'AccountingStorageType=accounting_storage/none',
        'JobCompType=jobcomp/filetxt',
        `JobCompLoc=${jobCompLog}`,
        'SelectType=select/cons_tres',
        'SelectTypeParameters=CR_Core',
        'SchedulerParameters=sched_interval=1,sched_min_interval=0,batch_sched_delay=0,bf_interval=1',
        'SlurmdParameters=config_overrides',
        'MailProg=/bin/true',
        'ReturnToService=2',
        `MinJobAge=${options.minJobAge ?? 300}`,
        'KillWait=2',
        'OverTimeLimit=0',
        `NodeName=localhost NodeAddr=127.0.0.1 CPUs=${cpus} RealMemory=8000 State=UNKNOWN`,
        ...(options.preemption
          ? ['PreemptType=preempt/partition_prio', 'PreemptMode=CANCEL', 'PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP PriorityTier=1', 'PartitionName=urgent Nodes=ALL Default=NO MaxTime=INFINITE State=UP PriorityTier=10 PreemptMode=OFF']
          : ['PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP']),
        '',
      ].join('\n'),
    );
    const env: NodeJS.ProcessEnv = { ...process.env, SLURM_CONF: confPath };
    delete env.SLURM_JWT;

    const daemonLog = (name: string) => join(dir, 'log', `${name}.out`);
    const start = async (name: string, bin: string, args: string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<ChildProcess> => {
      const { openSync, closeSync } = await import('node:fs');
      const fd = openSync(daemonLog(name), 'a');
      const child = spawn(which(bin) as string, args, { env: { ...env, ...extraEnv }, stdio: ['ignore', fd, fd] });
      closeSync(fd);
      children.push(child);
      child.on('error', () => undefined);
      return child;
    };
    const logs = async (...names: string[]): Promise<string> => {
      const parts: string[] = [];
      for (const n of names) {
        for (const f of [daemonLog(n), join(dir, 'log', `${n}.log`)]) {
          const text = await readFile(f, 'utf8').catch(() => '');
          if (text) parts.push(`--- ${f} (tail) ---\n${text.split('\n').slice(-20).join('\n')}`);
        }
      }
      return parts.join('\n');
    };

    await start('munged', 'munged', [
      '--foreground',
      `--key-file=${mungeKey}`,
      `--socket=${socket}`,
      `--pid-file=${join(dir, 'run', 'munged.pid')}`,
      `--log-file=${join(dir, 'log', 'munged.log')}`,
      `--seed-file=${join(dir, 'run', 'munged.seed')}`,
    ]);
    await waitFor('munged', async () => existsSync(socket), 5000, () => logs('munged'));

    await start('slurmctld', 'slurmctld', ['-D', '-f', confPath]);
    clientEnv = env;
    await waitFor('slurmctld (scontrol ping)', async () => (await run(which('scontrol') as string, ['ping'], env)).stdout.includes('UP'), 15_000, () => logs('slurmctld'));

    await start('slurmd', 'slurmd', ['-D', '-N', 'localhost', '-f', confPath]);
    await waitFor(
      'slurmd (node idle)',
      async () => (await run(which('sinfo') as string, ['-h', '-n', 'localhost', '-o', '%T'], env)).stdout.trim() === 'idle',
      20_000,
      () => logs('slurmd', 'slurmctld'),
    );

    let restUrl = '';
    let restToken = '';
    const restUser = 'root';
    if (options.rest ?? true) {
      // The token is minted without SLURM_JWT set (env has it deleted); the daemon gets SLURM_JWT=daemon.
      const tok = await run(which('scontrol') as string, ['token', 'lifespan=3600', `username=${restUser}`], env);
      const m = /SLURM_JWT=(\S+)/.exec(tok.stdout);
      if (tok.code !== 0 || !m) throw new Error(`startSlurm: scontrol token failed (exit ${tok.code}): ${tok.stderr || tok.stdout}`);
      restToken = m[1] as string;
      restUrl = `http://127.0.0.1:${restPort}`;
      await start('slurmrestd', 'slurmrestd', ['-f', confPath, '-a', 'rest_auth/jwt', '-s', 'openapi/v0.0.38', `127.0.0.1:${restPort}`], {
        SLURM_JWT: 'daemon',
        SLURMRESTD_SECURITY: 'disable_user_check',
      });
      await waitFor(
        'slurmrestd',
        async () => {
          try {
            const res = await fetch(`${restUrl}/slurm/v0.0.38/ping`, { headers: { 'X-SLURM-USER-NAME': restUser, 'X-SLURM-USER-TOKEN': restToken } });
            await res.arrayBuffer();
            return res.ok;
          } catch {
            return false;
          }
        },
        10_000,
        () => logs('slurmrestd'),
      );
    }
    return { env: { SLURM_CONF: confPath }, confPath, dir, jobCompLog, restUrl, restToken, restUser, cpus, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
