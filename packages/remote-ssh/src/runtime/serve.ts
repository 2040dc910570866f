/**
 * The persistent worker: one long-lived Node process per host (and worker bundle), started
 * detached (`setsid`, see `WORKER_SCRIPT`) in `<workDir>/workers/<hash>/`, where it keeps
 * `pid`, `sock` (a unix socket, bound by relative path so a long work dir is no problem) and
 * `worker.log`. It outlives the SSH channel that started it and the runner that used it.
 *
 * For each `run` it writes the same job dir a detached wrapper writes — `task.msgpack`, `pid`
 * (here the worker's pid), `stdout.log`, `stderr.log`, `result.msgpack`, then `exit`
 * atomically — plus a `worker` marker file, so the batched status check, log following and
 * adoption work unchanged. The step runs in a reused thread (see `thread.ts`). Completions
 * are also pushed to every connected executor (`done`), which spares it a status poll.
 *
 * Cancel: a `cancel` message on the channel that sent the step or, for a step adopted by another
 * runner, a `<jobDir>/cancel` file (the grace in ms) and SIGUSR2. The worker aborts the step's
 * `ctx.signal` and sends TERM to the step's subprocesses (found by the
 * `CAIRN_JOB_DIR` marker in their environment); after the grace it terminates the thread and
 * KILLs what is left. The job ends with exit 143 and a `CAIRN_CANCELLED` result.
 *
 * Before a step runs, its bundle (`code`) is checked against the `sha256` the executor sent:
 * a mismatch is `rejected` (`codeMismatch`) and nothing runs.
 *
 * It exits after `idleMs` without a connected executor or a running step, and as soon as its
 * directory is removed.
 */
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { isAbsolute, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { CairnError } from '@cairn/core';
import { WORKER_PROTOCOL, type FromThread, type FromWorker, type OutputListing, type ToThread, type ToWorker } from './protocol.js';
import { encodeResult, failure, startMeter, treeUsageFields, type AttemptUsage, type UsageMeter } from '@cairn/runner/worker';

/** Logs up to this size travel inline with `done`. */
const INLINE_LOG_BYTES = 64 * 1024;
/** Outputs with more files or bytes than this are left to the executor (SFTP walk + hash exec), not hashed here. */
const MAX_LISTED_FILES = 1000;
const MAX_LISTED_BYTES = 64 * 1024 * 1024;
/** Idle threads kept for reuse. */
const MAX_IDLE_THREADS = 16;
const EXIT_OK = 0;
const EXIT_FAILED = 1;
const EXIT_CANCELLED = 143;

interface Lane {
  readonly thread: Worker;
  job: Running | undefined;
  dead: boolean;
}

interface Running {
  readonly dir: string;
  readonly name: string;
  readonly lane: Lane;
  cancelling: boolean;
  killTimer: NodeJS.Timeout | undefined;
  /** An uncaught error of the thread, appended to stderr.log. */
  crash: string | undefined;
  /** List and hash the output dir on success. */
  readonly manifest: boolean;
  /** Cancel it when its `heartbeat` is older than this (see `ToWorker` run). */
  readonly orphanGraceMs: number | undefined;
  readonly killGraceMs: number;
  /** When the watchdog last judged its heartbeat. */
  watchedAt: number;
  /** Samples the step's subprocesses (found by their `CAIRN_JOB_DIR` marker) while it runs. */
  readonly meter: UsageMeter;
  /** What the step's thread reported of itself (CPU time, heap) with its result. */
  thread?: { readonly cpuMs?: number | undefined; readonly heapBytes?: number | undefined };
}

/**
 * What a worker step used: its thread's CPU time plus its subprocesses' (sampled), the thread's
 * heap, and the subprocesses' peak RSS and GPU use (the same fields as the runner's `threads`).
 */
function stepUsage(job: Running): AttemptUsage {
  const children = job.meter.peek();
  void job.meter.stop();
  const t = job.thread ?? {};
  const childCpu = children.cpuMs;
  const tree = treeUsageFields(children);
  return {
    executor: 'ssh',
    wallMs: children.wallMs,
    ...(t.cpuMs !== undefined || childCpu !== undefined ? { cpuMs: (t.cpuMs ?? 0) + (childCpu ?? 0), cpuScope: childCpu !== undefined ? 'tree' : 'thread' } : {}),
    ...(t.heapBytes !== undefined ? { peakMemoryBytes: t.heapBytes, memoryKind: 'heap' as const } : {}),
    ...(childCpu !== undefined ? { childCpuMs: childCpu, childPeakRssBytes: children.peakRssBytes } : {}),
    ...(tree.gpuPeakMemoryBytes !== undefined ? { gpuPeakMemoryBytes: tree.gpuPeakMemoryBytes } : {}),
    ...(tree.gpuUtilizationPercent !== undefined ? { gpuUtilizationPercent: tree.gpuUtilizationPercent } : {}),
    sampleIntervalMs: tree.sampleIntervalMs,
  };
}

function writeAtomic(path: string, data: string | Uint8Array): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, data);
  renameSync(tmp, path);
}

function log(message: string): void {
  process.stderr.write(`${new Date().toISOString()} ssh-worker[${process.pid}] ${message}\n`);
}

/** Which step (job dir) each direct child of this worker belongs to, read once per child from its environment. */
const childStep = new Map<number, string | null>();

/**
 * The processes of the step in `dir`, for its usage: this worker's direct children that carry
 * its marker, and their descendants (by parent pid, from the sampled process table: no
 * environment is read twice). A descendant that detached itself from them (double fork) is missed.
 */
function stepProcesses(table: ReadonlyMap<number, { readonly pid: number; readonly ppid: number }>, dir: string): number[] {
  const found = new Set<number>();
  for (const e of table.values()) {
    if (e.ppid !== process.pid) continue;
    let owner = childStep.get(e.pid);
    if (owner === undefined) {
      try {
        const env = Buffer.concat([Buffer.from([0]), readFileSync(`/proc/${e.pid}/environ`), Buffer.from([0])]);
        const key = '\0CAIRN_JOB_DIR=';
        const at = env.indexOf(key);
        owner = at < 0 ? null : env.subarray(at + key.length, env.indexOf(0, at + 1)).toString();
      } catch {
        owner = null;
      }
      childStep.set(e.pid, owner);
    }
    if (owner === dir) found.add(e.pid);
  }
  for (const pid of childStep.keys()) if (!table.has(pid)) childStep.delete(pid);
  for (let grew = found.size > 0; grew; ) {
    grew = false;
    for (const e of table.values()) {
      if (!found.has(e.pid) && found.has(e.ppid)) {
        found.add(e.pid);
        grew = true;
      }
    }
  }
  return [...found];
}

/** Pids of this user's processes whose environment carries `CAIRN_JOB_DIR=<dir>` (the step's subprocesses). */
function markedProcesses(dir: string): number[] {
  const marker = Buffer.from(`\0CAIRN_JOB_DIR=${dir}\0`);
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const env = Buffer.concat([Buffer.from([0]), readFileSync(`/proc/${entry}/environ`), Buffer.from([0])]);
      if (env.includes(marker)) out.push(Number(entry));
    } catch {
      // Exited, or another user's process.
    }
  }
  return out;
}

function signalMarked(dir: string, signal: NodeJS.Signals): void {
  for (const pid of markedProcesses(dir)) {
    try {
      process.kill(pid, signal);
    } catch {
      // Already gone.
    }
  }
}

/** The tree under `root` (regular files and directories, symlinks not followed, as SFTP lists them). */
function listOutputs(root: string): OutputListing | undefined {
  const dirs: string[] = [];
  const files: { path: string; size: number; sha256: string }[] = [];
  let total = 0;
  const visit = (rel: string): boolean => {
    for (const e of readdirSync(rel === '' ? root : join(root, rel), { withFileTypes: true })) {
      const r = rel === '' ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) {
        dirs.push(r);
        if (!visit(r)) return false;
      } else if (e.isFile()) {
        total += statSync(join(root, r)).size;
        if (files.length >= MAX_LISTED_FILES || total > MAX_LISTED_BYTES) return false;
        const bytes = readFileSync(join(root, r));
        files.push({ path: r, size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') });
      }
    }
    return true;
  };
  try {
    return visit('') ? { dirs, files } : undefined;
  } catch {
    return undefined;
  }
}

/** The last verified content of each step bundle, by path: a file is hashed again whenever it changed (inode, ctime or size). */
const verified = new Map<string, { ino: bigint; ctimeNs: bigint; size: bigint; sha256: string }>();

/**
 * True when the file at `path` is a regular file whose SHA-256 is `sha256`. A file changed since
 * it was last hashed (replaced: new inode; written: new ctime, which no user can set back) is
 * hashed again, so a planted same-size file is always caught.
 */
function codeMatches(path: string, sha256: string): boolean {
  try {
    const st = lstatSync(path, { bigint: true });
    if (!st.isFile()) return false;
    const seen = verified.get(path);
    if (seen && seen.ino === st.ino && seen.ctimeNs === st.ctimeNs && seen.size === st.size) return seen.sha256 === sha256;
    const actual = createHash('sha256').update(readFileSync(path)).digest('hex');
    verified.set(path, { ino: st.ino, ctimeNs: st.ctimeNs, size: st.size, sha256: actual });
    return actual === sha256;
  } catch {
    return false;
  }
}

function readSmall(path: string): string | undefined {
  try {
    if (statSync(path).size > INLINE_LOG_BYTES) return undefined;
    return readFileSync(path).toString('base64');
  } catch {
    return undefined;
  }
}

/** Runs the worker in the current directory until idle. */
export function serve(entryUrl: URL, idleMs: number): void {
  // The start script sets it already; job dirs, tasks, logs and results are the user's alone.
  process.umask(0o077);
  const home = process.cwd();
  const clients = new Set<Socket>();
  const running = new Map<string, Running>();
  const idle: Lane[] = [];
  let lastActive = Date.now();

  const broadcast = (msg: FromWorker) => {
    const line = `${JSON.stringify(msg)}\n`;
    for (const c of clients) if (!c.destroyed) c.write(line);
  };

  const newLane = (): Lane => {
    const lane: Lane = { thread: new Worker(entryUrl, { argv: ['thread'], env: { ...process.env }, stdout: false, stderr: false }), job: undefined, dead: false };
    lane.thread.on('message', (m: FromThread) => {
      const job = lane.job;
      if (!job || m.t !== 'done') return;
      job.thread = { cpuMs: m.cpuMs, heapBytes: m.heapBytes };
      finish(job, job.cancelling ? EXIT_CANCELLED : m.ok ? EXIT_OK : EXIT_FAILED, m.result);
    });
    lane.thread.on('error', (err) => {
      if (lane.job) lane.job.crash = `uncaught error in the step's thread: ${err.stack ?? err.message}`;
    });
    lane.thread.on('exit', (code) => {
      lane.dead = true;
      const at = idle.indexOf(lane);
      if (at >= 0) idle.splice(at, 1);
      const job = lane.job;
      // process.exit(n) in the step, an uncaught error, or terminate() on cancel.
      if (job) finish(job, job.cancelling ? EXIT_CANCELLED : code, job.cancelling ? cancelledResult(job) : undefined);
    });
    return lane;
  };

  const cancelledResult = (job: Running) => encodeResult(failure(new CairnError('CAIRN_CANCELLED', `Step "${job.name}" was cancelled.`, { step: job.name }))).bytes;

  const finish = (job: Running, code: number, result: Uint8Array | undefined) => {
    if (running.get(job.dir) !== job) return;
    running.delete(job.dir);
    lastActive = Date.now();
    if (job.killTimer) clearTimeout(job.killTimer);
    const lane = job.lane;
    lane.job = undefined;
    if (job.cancelling) signalMarked(job.dir, 'SIGKILL');
    if (!lane.dead && !job.cancelling && idle.length < MAX_IDLE_THREADS) idle.push(lane);
    else if (!lane.dead) void lane.thread.terminate();
    const usage: AttemptUsage = { ...stepUsage(job), exitCode: code, signal: null };
    const msg: { t: 'done'; dir: string; code: number; result?: string; usage?: Readonly<Record<string, unknown>>; stdout?: string; stderr?: string; out?: OutputListing } = { t: 'done', dir: job.dir, code, usage: { ...usage } };
    try {
      writeAtomic(join(job.dir, 'usage.json'), JSON.stringify(usage));
      if (job.crash) writeFileSync(join(job.dir, 'stderr.log'), `${job.crash}\n`, { flag: 'a' });
      if (result) writeAtomic(join(job.dir, 'result.msgpack'), result);
      writeAtomic(join(job.dir, 'exit'), `${code}\n`);
    } catch (err) {
      log(`cannot record the end of ${job.dir}: ${(err as Error).message}`);
      return;
    }
    if (result) msg.result = Buffer.from(result).toString('base64');
    const stdout = readSmall(join(job.dir, 'stdout.log'));
    const stderr = readSmall(join(job.dir, 'stderr.log'));
    if (stdout !== undefined && stderr !== undefined) Object.assign(msg, { stdout, stderr });
    if (job.manifest && code === EXIT_OK) {
      const out = listOutputs(join(job.dir, 'out'));
      if (out) msg.out = out;
    }
    broadcast(msg);
  };

  const start = (msg: Extract<ToWorker, { t: 'run' }>) => {
    const dir = msg.dir;
    if (typeof dir !== 'string' || !isAbsolute(dir) || typeof msg.task !== 'string') {
      broadcast({ t: 'rejected', dir: String(dir), message: 'a run message needs an absolute `dir` and a base64 `task`' });
      return;
    }
    if (running.has(dir)) {
      broadcast({ t: 'rejected', dir, message: `${dir} is already running in this worker` });
      return;
    }
    if (typeof msg.code !== 'string' || typeof msg.sha256 !== 'string' || !codeMatches(msg.code, msg.sha256)) {
      log(`refused ${dir}: ${String(msg.code)} does not match its SHA-256 ${String(msg.sha256)}`);
      broadcast({ t: 'rejected', dir, message: `the step bundle ${String(msg.code)} does not match its SHA-256 ${String(msg.sha256)}; it was not run`, codeMismatch: true });
      return;
    }
    const task = Buffer.from(msg.task, 'base64');
    const stdout = join(dir, 'stdout.log');
    const stderr = join(dir, 'stderr.log');
    try {
      mkdirSync(dir, { recursive: true });
      for (const f of ['exit', 'result.msgpack', 'cancel']) rmSync(join(dir, f), { force: true });
      writeAtomic(join(dir, 'task.msgpack'), task);
      writeFileSync(stdout, '');
      writeFileSync(stderr, '');
      writeAtomic(join(dir, 'worker'), `${home}\n`);
      writeAtomic(join(dir, 'pid'), `${process.pid}\n`);
      writeFileSync(join(dir, 'heartbeat'), '');
      rmSync(join(dir, 'watchdog'), { force: true });
    } catch (err) {
      broadcast({ t: 'rejected', dir, message: `cannot prepare the job dir: ${(err as Error).message}` });
      return;
    }
    let lane = idle.pop();
    while (lane?.dead) lane = idle.pop();
    lane ??= newLane();
    const name = typeof msg.step === 'string' ? msg.step : dir;
    const grace = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : undefined);
    const job: Running = { dir, name, lane, cancelling: false, killTimer: undefined, crash: undefined, manifest: msg.manifest === true, orphanGraceMs: grace(msg.orphanGraceMs), killGraceMs: grace(msg.killGraceMs) ?? 5000, watchedAt: Date.now(), meter: startMeter((table) => stepProcesses(table, dir)) };
    lane.job = job;
    running.set(dir, job);
    lastActive = Date.now();
    const secrets = typeof msg.secrets === 'object' && msg.secrets !== null ? msg.secrets : undefined;
    const run: ToThread = { t: 'run', dir, task, cuda: typeof msg.cuda === 'string' ? msg.cuda : '', stdout, stderr, secrets };
    lane.thread.postMessage(run);
  };

  /** Aborts the step, TERMs its subprocesses; after the grace, stops its thread and KILLs what is left. */
  const cancel = (job: Running, graceMs: number) => {
    if (job.cancelling) return;
    job.cancelling = true;
    const abort: ToThread = { t: 'abort', message: `Step "${job.name}" was cancelled (TERM).` };
    job.lane.thread.postMessage(abort);
    signalMarked(job.dir, 'SIGTERM');
    job.killTimer = setTimeout(
      () => {
        if (running.get(job.dir) !== job) return;
        // The step ignored its signal: stop its thread (a new one is started for the next step).
        job.lane.dead = true;
        void job.lane.thread.terminate();
        finish(job, EXIT_CANCELLED, cancelledResult(job));
      },
      Number.isFinite(graceMs) && graceMs >= 0 ? graceMs : 5000,
    );
  };

  /** SIGUSR2: cancel the running jobs that have a `cancel` file (it holds the grace in ms). */
  const cancelRequested = () => {
    for (const job of running.values()) {
      if (job.cancelling) continue;
      try {
        cancel(job, Number.parseInt(readFileSync(join(job.dir, 'cancel'), 'utf8'), 10));
      } catch {
        // No cancel file: not this job.
      }
    }
  };
  process.on('SIGUSR2', cancelRequested);

  const handle = (msg: ToWorker) => {
    if (msg.t === 'run') start(msg);
    else if (msg.t === 'cancel') {
      for (const d of msg.dirs) {
        const job = running.get(d);
        if (job) cancel(job, msg.graceMs);
      }
    } else if (msg.t === 'cleanup') for (const d of msg.dirs) if (typeof d === 'string' && isAbsolute(d)) rmSync(d, { recursive: true, force: true });
  };

  const server = createServer((sock) => {
    clients.add(sock);
    lastActive = Date.now();
    sock.setEncoding('utf8');
    let rest = '';
    sock.on('data', (chunk: string) => {
      rest += chunk;
      let nl: number;
      while ((nl = rest.indexOf('\n')) >= 0) {
        const text = rest.slice(0, nl);
        rest = rest.slice(nl + 1);
        if (text === '') continue;
        try {
          handle(JSON.parse(text) as ToWorker);
        } catch (err) {
          // Not the text: a run message may carry secrets.
          log(`bad message of ${text.length} characters (${(err as Error).message})`);
        }
      }
    });
    const drop = () => {
      clients.delete(sock);
      lastActive = Date.now();
    };
    sock.on('close', drop);
    sock.on('error', drop);
    sock.on('end', () => sock.end());
    const hello: FromWorker = { t: 'hello', pid: process.pid, protocol: WORKER_PROTOCOL };
    sock.write(`${JSON.stringify(hello)}\n`);
  });

  const shutdown = (why: string) => {
    log(`exiting: ${why}`);
    server.close();
    try {
      if (readFileSync('pid', 'utf8').trim() === String(process.pid)) {
        unlinkSync('pid');
        unlinkSync('sock');
      }
    } catch {
      // Already removed.
    }
    process.exit(0);
  };

  const listen = (retry: boolean) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      // The start script holds the lock and found no live worker: the socket is stale.
      if (err.code === 'EADDRINUSE' && retry) {
        rmSync('sock', { force: true });
        listen(false);
        return;
      }
      log(`cannot listen on ${join(home, 'sock')}: ${err.message}`);
      process.exit(1);
    });
    server.listen('sock', () => {
      writeAtomic('pid', `${process.pid}\n`);
      log(`listening (idle exit after ${idleMs} ms)`);
    });
  };
  listen(true);

  // The watchdog: a step no runner has checked on for its orphan grace is cancelled, as the
  // detached wrapper's watchdog does, so it does not run on for a runner that will never collect it.
  // The heartbeat's age is measured against a file touched here (`now`): one clock, even on NFS.
  setInterval(() => {
    for (const job of running.values()) {
      if (job.cancelling || job.orphanGraceMs === undefined) continue;
      if (Date.now() - job.watchedAt < Math.min(10_000, Math.max(1000, job.orphanGraceMs / 5))) continue;
      job.watchedAt = Date.now();
      let age: number;
      try {
        writeFileSync(join(job.dir, 'now'), '');
        age = statSync(join(job.dir, 'now')).mtimeMs - statSync(join(job.dir, 'heartbeat')).mtimeMs;
      } catch {
        continue; // its job dir is gone: nothing to judge by
      }
      if (age <= job.orphanGraceMs) continue;
      const why = `no runner for ${Math.round(age / 1000)} s (the heartbeat is older than the orphan grace of ${Math.round(job.orphanGraceMs / 1000)} s): stopping the job`;
      log(`${job.dir}: ${why}`);
      try {
        writeFileSync(join(job.dir, 'watchdog'), `${why}\n`);
      } catch {
        // the line in worker.log says it
      }
      cancel(job, job.killGraceMs);
    }
  }, 1000).unref();

  setInterval(() => {
    if (!existsSync(home)) shutdown('its directory was removed');
    else if (clients.size === 0 && running.size === 0 && Date.now() - lastActive > idleMs) shutdown(`idle for ${idleMs} ms`);
  }, Math.min(1000, Math.max(50, idleMs / 2)));
}
