/**
 * A real S3-compatible object store for tests and benchmarks: a one-monitor, one-OSD (memstore)
 * Ceph with a RADOS Gateway on 127.0.0.1 (see /work/shared/INFRA.md, "A real S3-compatible
 * object store").
 *
 * `startRgw()` makes a temp dir with its own `ceph.conf` (a fresh fsid, free ports), starts
 * ceph-mon → ceph-osd → radosgw, waits for each with a timeout, creates a user and a bucket, and
 * returns what an S3 client needs. The daemons write pid files under `{dir}/run`; `stop()` ends
 * exactly those pids and removes the directory. Every port is picked free, so several test files
 * may each start their own instance at once. A watchdog shell stops the daemons if this process
 * dies without calling `stop()`.
 *
 * The OSD keeps objects in RAM (memstore): restarting the gateway keeps them, stopping the
 * cluster loses them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Options of {@link startRgw}. */
export interface RgwOptions {
  /** Name of the bucket to create. @default 'cairn-test' */
  readonly bucket?: string;
  /** Keep the temp dir after `stop()` (debugging). @default false */
  readonly keepDir?: boolean;
  /** Overall start-up timeout. @default 90_000 */
  readonly timeoutMs?: number;
}

/** A running gateway with one user and one bucket. */
export interface RgwInstance {
  /** `http://127.0.0.1:PORT`. */
  readonly endpoint: string;
  /** The gateway's port. */
  readonly port: number;
  /** Any region works; this is what tests pass. */
  readonly region: string;
  /** The bucket created at start. */
  readonly bucket: string;
  /** The user's access key id. */
  readonly accessKeyId: string;
  /** The user's secret key. */
  readonly secretAccessKey: string;
  /** The cluster's temp dir (config, logs, pid files). */
  readonly dir: string;
  /** `ceph.conf` of the cluster. */
  readonly confPath: string;
  /** Environment for an AWS SDK client in a child process (`AWS_ACCESS_KEY_ID`, `AWS_ENDPOINT_URL`, …). */
  readonly env: Readonly<Record<string, string>>;
  /** Creates another bucket (owned by the same user). */
  createBucket(name: string): Promise<void>;
  /** Creates another user; resolves with its keys. */
  createUser(uid: string): Promise<{ accessKeyId: string; secretAccessKey: string }>;
  /** Stops the gateway (SIGKILL when `hard`); objects stay in the OSD. */
  stopGateway(hard?: boolean): Promise<void>;
  /** Starts the gateway again on the same port and waits until it answers. */
  startGateway(): Promise<void>;
  /** The last lines of each daemon's log (for failure messages). */
  logTail(lines?: number): string;
  /** Stops every daemon this harness started (by the pids they recorded) and removes the dir. Safe to call twice. */
  stop(): Promise<void>;
}

const BINARIES = ['ceph-mon', 'ceph-osd', 'radosgw', 'radosgw-admin', 'ceph', 'monmaptool'] as const;
const SEARCH = ['/usr/bin', '/usr/sbin', '/bin', '/sbin'];

function which(name: string): string | undefined {
  for (const d of [...(process.env.PATH ?? '').split(':'), ...SEARCH]) if (d && existsSync(join(d, name))) return join(d, name);
  return undefined;
}

/** Names of the Ceph binaries that are missing (empty when a gateway can run here). */
export function missingRgwBinaries(): string[] {
  return BINARIES.filter((b) => which(b) === undefined);
}

/**
 * True when a gateway can be started. Without Ceph, tests skip with a message naming `what` —
 * except in CI (`CI` set), where missing binaries are a failure.
 */
export function rgwOrSkip(what: string): boolean {
  const missing = missingRgwBinaries();
  if (missing.length === 0) return true;
  const msg = `Ceph is not installed (missing ${missing.join(', ')}): run tools/testenv/install-system.sh`;
  if (process.env.CI) throw new Error(`CI: ${msg} before ${what}.`);
  console.warn(`SKIPPING ${what}: ${msg}.`);
  return false;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
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

interface Ran {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a command to completion (killed after `timeoutMs`). */
function run(cmd: string, args: readonly string[], timeoutMs = 30_000): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      resolve({ code: -1, stdout, stderr: `${stderr}${err.message}` });
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const t0 = Date.now();
const debug = (what: string) => {
  if (process.env.CAIRN_RGW_DEBUG) console.error(`[rgw] ${what} at ${Date.now() - t0} ms`);
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    const state = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^\d+ \(.*\) /s, '')[0];
    return state !== 'Z';
  } catch {
    return false;
  }
}

function kill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Already gone.
  }
}

function tail(file: string, lines: number): string {
  try {
    const all = readFileSync(file, 'utf8').trimEnd().split('\n');
    return all.slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

function config(dir: string, fsid: string, monPort: number, rgwPort: number): string {
  const D = dir;
  return `[global]
fsid = ${fsid}
mon host = v1:127.0.0.1:${monPort}
auth cluster required = none
auth service required = none
auth client required = none
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
mon allow pool size one = true
mon max pg per osd = 1000
mon warn on pool no redundancy = false
paxos propose interval = 0.05
paxos min wait = 0.01
osd crush chooseleaf type = 0
osd objectstore = memstore
osd crush update on start = false
osd class update on start = false
memstore device bytes = 1073741824
run dir = ${D}/run
pid file = ${D}/run/$name.pid
admin socket = ${D}/run/$name.asok
log file = ${D}/log/$name.log
keyring = ${D}/keyring
mon data = ${D}/mon/$cluster-$id
osd data = ${D}/osd/$cluster-$id
ms bind ipv6 = false
public addr = 127.0.0.1
cluster addr = 127.0.0.1
[mon.a]
mon addr = v1:127.0.0.1:${monPort}
[client.rgw.a]
rgw frontends = beast endpoint=127.0.0.1:${rgwPort}
rgw dns name = 127.0.0.1
rgw data = ${D}/rgw
`;
}

/** Starts a one-monitor, one-OSD Ceph and a gateway; resolves once the bucket exists. */
export async function startRgw(options: RgwOptions = {}): Promise<RgwInstance> {
  const missing = missingRgwBinaries();
  if (missing.length > 0) throw new Error(`Ceph is not installed (missing ${missing.join(', ')}): run tools/testenv/install-system.sh`);
  const deadline = Date.now() + (options.timeoutMs ?? 90_000);
  const bucket = options.bucket ?? 'cairn-test';
  const dir = mkdtempSync(join(tmpdir(), 'cairn-rgw-'));
  for (const d of ['run', 'log', 'mon', 'osd', 'rgw']) mkdirSync(join(dir, d));
  const conf = join(dir, 'ceph.conf');
  const [monPort, rgwPort] = [await freePort(), await freePort()];
  const fsid = randomUUID();
  writeFileSync(conf, config(dir, fsid, monPort, rgwPort));
  const c = ['-c', conf];
  const pidFiles = () => ['mon.a', 'osd.0', 'client.rgw.a'].map((n) => join(dir, 'run', `${n}.pid`));
  const readPid = (file: string): number | undefined => {
    try {
      const n = Number(readFileSync(file, 'utf8').trim());
      return Number.isInteger(n) && n > 0 ? n : undefined;
    } catch {
      return undefined;
    }
  };
  const logTail = (lines = 15) =>
    ['mon.a', 'osd.0', 'client.rgw.a']
      .map((n) => `--- ${n} (${join(dir, 'log', `${n}.log`)}) ---\n${tail(join(dir, 'log', `${n}.log`), lines)}`)
      .join('\n');
  const children: ChildProcess[] = [];
  let watchdog: ChildProcess | undefined;
  let stopped = false;

  /** Spawns a daemon in the foreground (`-f`) so an early exit is seen; it writes its own pid file. */
  const daemon = (cmd: string, args: readonly string[], name: string): ChildProcess => {
    const out = openSync(join(dir, 'log', `${name}.stdout`), 'a');
    const child = spawn(cmd, [...c, '-f', ...args], { stdio: ['ignore', out, out], detached: true });
    child.unref();
    // In the foreground the child is the daemon. The monitor and the OSD write their pid file
    // themselves (the same pid); radosgw -f writes none, so the harness records it.
    if (child.pid !== undefined) writeFileSync(join(dir, 'run', `${name}.pid`), `${child.pid}\n`);
    children.push(child);
    armWatchdog();
    return child;
  };

  const armWatchdog = () => {
    if (watchdog) return;
    // Kills the daemons by their pid files when this process dies without stop(). Detached and
    // unref'd: it never keeps this process alive.
    const files = pidFiles().join(' ');
    const script = `while kill -0 ${process.pid} 2>/dev/null && [ -d '${dir}' ]; do sleep 2; done; [ -d '${dir}' ] || exit 0; for f in ${files}; do [ -f "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null; done; ${options.keepDir ? '' : `rm -rf '${dir}'`}`;
    watchdog = spawn('/bin/sh', ['-c', script], { stdio: 'ignore', detached: true });
    watchdog.unref();
  };

  const stopAll = async () => {
    if (stopped) return;
    stopped = true;
    if (watchdog?.pid !== undefined) kill(watchdog.pid, 'SIGKILL');
    const pids = new Set<number>();
    for (const f of pidFiles()) {
      const p = readPid(f);
      if (p !== undefined) pids.add(p);
    }
    // A daemon that died before writing its pid file is still our child.
    for (const ch of children) if (ch.pid !== undefined && ch.exitCode === null) pids.add(ch.pid);
    // SIGKILL: the cluster keeps nothing worth a clean shutdown (memstore), and the OSD takes
    // seconds to honour SIGTERM.
    for (const p of pids) kill(p, 'SIGKILL');
    const until = Date.now() + 5_000;
    while ([...pids].some(alive) && Date.now() < until) await sleep(20);
    if (!options.keepDir) rmSync(dir, { recursive: true, force: true });
  };

  const fail = async (what: string, detail = ''): Promise<never> => {
    const logs = logTail();
    await stopAll();
    throw new Error(`RADOS Gateway harness: ${what}${detail ? `\n${detail.trim()}` : ''}\n${logs}`);
  };

  const must = async (what: string, cmd: string, args: readonly string[], timeoutMs = 30_000): Promise<string> => {
    const r = await run(cmd, args, Math.max(1_000, Math.min(timeoutMs, deadline - Date.now())));
    if (r.code !== 0) await fail(`${what} failed (exit ${String(r.code)})`, `${r.stderr}\n${r.stdout}`.slice(-2000));
    return r.stdout;
  };

  /** A `ceph` CLI command, retried (see the fsid race below); resolves with its trimmed stdout. */
  const retried = async (what: string, args: readonly string[]): Promise<string> => {
    for (let attempt = 1; ; attempt++) {
      const r = await run('ceph', [...c, '--connect-timeout', '10', ...args], 20_000);
      if (r.code === 0) return r.stdout.trim();
      if (attempt === 6 || Date.now() > deadline) return fail(`${what} failed (exit ${String(r.code)}) ${attempt} times`, r.stderr);
      await sleep(300);
    }
  };

  const waitFor = async (what: string, check: () => Promise<boolean>, child?: ChildProcess): Promise<void> => {
    for (;;) {
      if (await check()) return;
      if (child && child.exitCode !== null) await fail(`${what}: the daemon exited with code ${String(child.exitCode)}`);
      if (Date.now() > deadline) await fail(`timed out waiting for ${what}`);
      await sleep(200);
    }
  };

  try {
    await must('monmaptool', 'monmaptool', [...c, '--create', '--fsid', fsid, '--addv', 'a', `[v1:127.0.0.1:${monPort}]`, join(dir, 'monmap')]);
    await must('ceph-mon --mkfs', 'ceph-mon', [...c, '--mkfs', '-i', 'a', '--monmap', join(dir, 'monmap')]);
    const mon = daemon('ceph-mon', ['-i', 'a'], 'mon.a');
    await waitFor('the monitor to listen', () => canConnect(monPort), mon);
    debug('mon listens');
    const osdUuid = randomUUID();
    await waitFor('the monitor quorum', async () => (await run('ceph', [...c, '--connect-timeout', '5', 'quorum_status'], 10_000)).code === 0, mon);
    const id = await retried('ceph osd new', ['osd', 'new', osdUuid]); // idempotent for one uuid
    if (id !== '0') await fail(`ceph osd new printed ${JSON.stringify(id)}, expected 0`);
    mkdirSync(join(dir, 'osd', `ceph-${id}`));
    await must('ceph-osd --mkfs', 'ceph-osd', [...c, '-i', id, '--mkfs', '--osd-uuid', osdUuid]);
    // Ceph 16 clients (an OSD, the CLI) sometimes send their first monitor command before they
    // have the cluster's fsid and are refused ('wrong fsid', EPERM; about one start in five
    // here, and an OSD then exits 1). So the OSD sends none at start (`osd crush update on start`
    // and `osd class update on start` are off) and the CLI, which retries, puts it in the CRUSH map.
    const osd = daemon('ceph-osd', ['-i', id], 'osd.0');
    await retried('ceph osd crush add', ['osd', 'crush', 'add', `osd.${id}`, '1.0', 'root=default', 'host=localhost']);
    const osdUp = async () => /\b1 up\b/.test((await run('ceph', [...c, '--connect-timeout', '5', 'osd', 'stat'], 10_000)).stdout);
    await waitFor('the OSD to be up', osdUp, osd);
    debug('osd up');
    const answers = async () => {
      try {
        const res = await fetch(`http://127.0.0.1:${rgwPort}/`, { signal: AbortSignal.timeout(2_000) });
        await res.arrayBuffer();
        return res.status < 500;
      } catch {
        return false;
      }
    };
    /** Starts radosgw and waits until it answers; started again if it exits (the fsid race). */
    const launchGateway = async (until: number): Promise<ChildProcess> => {
      for (let attempt = 1; ; attempt++) {
        const g = daemon('radosgw', ['-n', 'client.rgw.a'], 'client.rgw.a');
        while (g.exitCode === null && !(await answers())) {
          if (Date.now() > until) throw new Error(`timed out waiting for the gateway to answer HTTP\n${logTail()}`);
          await sleep(200);
        }
        if (g.exitCode === null) return g;
        if (attempt === 3) throw new Error(`the gateway exited with code ${String(g.exitCode)} on ${attempt} starts\n${logTail()}`);
      }
    };
    const rgw = await launchGateway(deadline).catch((err: Error) => fail(err.message));
    debug('gateway answers');
    const accessKeyId = `CAIRN${randomBytes(8).toString('hex').toUpperCase()}`;
    const secretAccessKey = randomBytes(24).toString('base64url');
    await must('radosgw-admin user create', 'radosgw-admin', [...c, 'user', 'create', '--uid=cairn', '--display-name=cairn', `--access-key=${accessKeyId}`, `--secret=${secretAccessKey}`]);
    const endpoint = `http://127.0.0.1:${rgwPort}`;
    const region = 'us-east-1';
    const { S3Client, CreateBucketCommand } = await import('@aws-sdk/client-s3');
    const makeBucket = async (name: string, keys = { accessKeyId, secretAccessKey }) => {
      const client = new S3Client({ endpoint, region, forcePathStyle: true, credentials: keys, maxAttempts: 5 });
      try {
        await client.send(new CreateBucketCommand({ Bucket: name }));
      } finally {
        client.destroy();
      }
    };
    await makeBucket(bucket).catch((err: unknown) => fail(`creating bucket ${bucket} failed: ${String(err)}`));
    debug('bucket created');
    let gateway: ChildProcess = rgw;
    return {
      endpoint,
      port: rgwPort,
      region,
      bucket,
      accessKeyId,
      secretAccessKey,
      dir,
      confPath: conf,
      env: { AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey, AWS_REGION: region, AWS_ENDPOINT_URL: endpoint },
      createBucket: (name) => makeBucket(name),
      async createUser(uid) {
        const keys = { accessKeyId: `CAIRN${randomBytes(8).toString('hex').toUpperCase()}`, secretAccessKey: randomBytes(24).toString('base64url') };
        await must('radosgw-admin user create', 'radosgw-admin', [...c, 'user', 'create', `--uid=${uid}`, `--display-name=${uid}`, `--access-key=${keys.accessKeyId}`, `--secret=${keys.secretAccessKey}`]);
        return keys;
      },
      async stopGateway(hard = false) {
        const pid = readPid(join(dir, 'run', 'client.rgw.a.pid')) ?? gateway.pid;
        if (pid === undefined) return;
        kill(pid, hard ? 'SIGKILL' : 'SIGTERM');
        const until = Date.now() + 10_000;
        while (alive(pid) && Date.now() < until) await sleep(50);
        if (alive(pid)) kill(pid, 'SIGKILL');
        while (await canConnect(rgwPort)) await sleep(50);
      },
      async startGateway() {
        gateway = await launchGateway(Date.now() + 60_000);
      },
      logTail,
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
