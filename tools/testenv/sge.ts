/**
 * A real one-host Son of Grid Engine cell for tests (see /work/shared/INFRA.md, "A real Son of
 * Grid Engine cell on one host").
 *
 * Debian's gridengine packages are a system-wide install (`SGE_ROOT=/var/lib/gridengine`, one
 * `default` cell, fixed ports). So that two harnesses (two test files, two developers) never
 * share or break one cell, `startSge()` makes a PRIVATE cell instead: a temp `SGE_ROOT` whose
 * `bin`, `lib`, `utilbin` and `util` link to the system install, with its own `default/common`
 * (classic spooling, `act_qmaster`, `host_aliases`), its own spool directories and two free
 * ports (`SGE_QMASTER_PORT`, `SGE_EXECD_PORT`). It applies the fixes INFRA.md records (host
 * aliases, `act_qmaster`, root as manager, `min_uid`/`min_gid` 0 before execd starts, a queue
 * without load thresholds, a one-second scheduling interval, accounting flushed every second)
 * and one more: no login shells (a job's bash would run the user's profile first),
 * then starts `sge_qmaster` and `sge_execd` and waits until the queue takes jobs.
 *
 * The daemons fork into the background: they are stopped by the pids they write
 * (`qmaster.pid`, `execd.pid`), never by name. Each running cell is registered in
 * `<tmpdir>/cairn-sge-cells/` with its owner's pid; a later `startSge()` stops the daemons of
 * any cell whose owner died (after checking each pid still runs an SGE daemon) and removes it.
 * Nothing is written under /var/lib/gridengine.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink, unlink, writeFile, chmod } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.js';

/** A running cell. */
export interface SgeCell {
  /** Environment every client (`qsub`, `qstat`…) needs. */
  readonly env: { readonly SGE_ROOT: string; readonly SGE_CELL: string; readonly SGE_QMASTER_PORT: string; readonly SGE_EXECD_PORT: string };
  /** The cell's temp `SGE_ROOT`. */
  readonly root: string;
  /** The host's name as the cell knows it. */
  readonly host: string;
  /** Slots of the queue jobs run in (`all.q`). */
  readonly slots: number;
  /** A queue with no slots (`held.q`): a job sent there stays queued (for tests of queued jobs). */
  readonly heldQueue: string;
  /** The accounting file (`qacct` reads it). */
  readonly accountingFile: string;
  /** Deletes every job, stops both daemons by pid and removes the cell. Safe to call twice. */
  stop(): Promise<void>;
}

/** Options of {@link startSge}. */
export interface StartSgeOptions {
  /** Slots of `all.q` (more than the machine's CPUs is fine). @default 8 */
  readonly slots?: number;
  /** Keep the cell's directory after `stop()` (debugging). @default false */
  readonly keepDir?: boolean;
}

const SYSTEM_ROOT = '/var/lib/gridengine';
const LIB = '/usr/lib/gridengine';
const DAEMONS = ['/usr/sbin/sge_qmaster', '/usr/sbin/sge_execd'];
const CLIENTS = ['qsub', 'qstat', 'qacct', 'qdel', 'qconf'];
const REGISTRY = join(tmpdir(), 'cairn-sge-cells');

/** What is missing to run a cell here (empty when Grid Engine is installed). */
export function missingSgeBinaries(): string[] {
  const missing = DAEMONS.filter((d) => !existsSync(d));
  for (const c of [...CLIENTS, 'spoolinit', 'spooldefaults']) if (!existsSync(join(LIB, c))) missing.push(c);
  if (!existsSync(join(SYSTEM_ROOT, 'util'))) missing.push(`${SYSTEM_ROOT}/util`);
  return missing;
}

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv, input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(cmd, args, { env, timeout: 20_000, cwd: '/' }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
    child.stdin?.end(input);
  });
}

async function must(what: string, cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const r = await run(cmd, args, env);
  if (r.code !== 0) throw new Error(`startSge: ${what} failed (\`${cmd} ${args.join(' ')}\` exited ${r.code}): ${(r.stderr || r.stdout).trim()}`);
  return r.stdout;
}

async function waitFor(what: string, check: () => Promise<boolean> | boolean, timeoutMs: number, diag: () => Promise<string>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`startSge: timed out after ${timeoutMs} ms waiting for ${what}.\n${await diag()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** True while `pid` runs (a zombie counts as gone). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
}

/** True when `pid` runs one of the SGE daemons (so a recycled pid is never signalled). */
function isSgeDaemon(pid: number): boolean {
  return /\bsge_(qmaster|execd|shepherd)\b/.test(cmdline(pid));
}

function readPid(path: string): number | undefined {
  try {
    const pid = Number(readFileSync(path, 'utf8').trim());
    return Number.isInteger(pid) && pid > 1 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** The pid files of a cell's daemons (execd's spool directory is named after the host as it resolves it). */
function pidFiles(root: string): string[] {
  const execd = join(root, 'spool', 'execd');
  const files = existsSync(execd) ? readdirSync(execd).map((d) => join(execd, d, 'execd.pid')) : [];
  return [...files, join(root, 'spool', 'qmaster', 'qmaster.pid')];
}

/**
 * Stops a cell's daemons by their recorded pids: TERM, then KILL after a grace (qmaster's own
 * shutdown takes about 7 s here; the cell is thrown away, so it gets 3).
 */
async function stopDaemons(root: string): Promise<void> {
  for (const file of pidFiles(root)) {
    const pid = readPid(file);
    if (pid === undefined || !alive(pid) || !isSgeDaemon(pid)) continue;
    process.kill(pid, 'SIGTERM');
    const deadline = Date.now() + 3000;
    while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    if (alive(pid) && isSgeDaemon(pid)) process.kill(pid, 'SIGKILL');
  }
}

/** The jobs a cell's execd is running: `active_jobs/<job>.<task>/{pid,job_pid}` (shepherd and job). */
function activeJobs(root: string): { shepherd?: number; job?: number }[] {
  const out: { shepherd?: number; job?: number }[] = [];
  const execd = join(root, 'spool', 'execd');
  if (!existsSync(execd)) return out;
  for (const host of readdirSync(execd)) {
    const active = join(execd, host, 'active_jobs');
    if (!existsSync(active)) continue;
    for (const j of readdirSync(active)) out.push({ shepherd: readPid(join(active, j, 'pid')), job: readPid(join(active, j, 'job_pid')) });
  }
  return out;
}

/**
 * Stops a cell: deletes its jobs and waits for them to go, kills by pid any job (process group)
 * or shepherd still there (shepherds outlive execd by design), then stops the daemons.
 */
async function stopCell(root: string, env: NodeJS.ProcessEnv | undefined): Promise<void> {
  const qmaster = readPid(join(root, 'spool', 'qmaster', 'qmaster.pid'));
  if (env && qmaster !== undefined && alive(qmaster)) {
    await run(join(LIB, 'qdel'), ['-f', '-u', '*'], env);
    const deadline = Date.now() + 8000;
    while (activeJobs(root).some((j) => j.job !== undefined && alive(j.job)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  }
  for (const { shepherd, job } of activeJobs(root)) {
    // The job script runs from this cell's spool (a recycled pid never matches), as its own process group.
    if (job !== undefined && alive(job) && cmdline(job).includes(root)) {
      try {
        process.kill(-job, 'SIGKILL');
      } catch {
        process.kill(job, 'SIGKILL');
      }
    }
    if (shepherd !== undefined && alive(shepherd) && isSgeDaemon(shepherd)) process.kill(shepherd, 'SIGKILL');
  }
  await stopDaemons(root);
}

/** Stops and removes cells whose owner process is gone (a test run that died). */
async function sweepStale(): Promise<void> {
  if (!existsSync(REGISTRY)) return;
  for (const name of readdirSync(REGISTRY)) {
    const entry = join(REGISTRY, name);
    let rec: { owner?: number; root?: string; env?: Record<string, string> };
    try {
      rec = JSON.parse(readFileSync(entry, 'utf8')) as typeof rec;
    } catch {
      continue;
    }
    if (typeof rec.owner === 'number' && alive(rec.owner)) continue;
    if (typeof rec.root === 'string' && rec.root.startsWith(join(tmpdir(), 'cairn-sge-'))) {
      await stopCell(rec.root, rec.env ? { ...process.env, ...rec.env } : undefined);
      await rm(rec.root, { recursive: true, force: true });
    }
    await unlink(entry).catch(() => undefined);
  }
}

/** Names this host goes by: its hostname, `localhost`, and what its address resolves back to. */
async function aliases(host: string): Promise<string[]> {
  const names = new Set([host, 'localhost']);
  const fwd = await run('getent', ['hosts', host], process.env);
  const ip = fwd.stdout.trim().split(/\s+/)[0];
  if (ip) {
    const back = await run('getent', ['hosts', ip], process.env);
    for (const n of back.stdout.trim().split(/\s+/).slice(1)) names.add(n);
  }
  return [...names];
}

/** Starts a private one-host cell; throws with the daemons' messages if it does not come up. */
export async function startSge(options: StartSgeOptions = {}): Promise<SgeCell> {
  const missing = missingSgeBinaries();
  if (missing.length > 0) throw new Error(`startSge: missing ${missing.join(', ')}; run tools/testenv/install-system.sh.`);
  await sweepStale();
  const slots = options.slots ?? 8;
  const root = await mkdtemp(join(tmpdir(), 'cairn-sge-'));
  await chmod(root, 0o755);
  const common = join(root, 'default', 'common');
  const qmasterSpool = join(root, 'spool', 'qmaster');
  const execdSpool = join(root, 'spool', 'execd');
  const [qmasterPort, execdPort] = [await freePort(), await freePort()];
  const env = { SGE_ROOT: root, SGE_CELL: 'default', SGE_QMASTER_PORT: String(qmasterPort), SGE_EXECD_PORT: String(execdPort) };
  const penv: NodeJS.ProcessEnv = { ...process.env, ...env, PATH: `${LIB}:${process.env.PATH ?? '/usr/bin:/bin'}` };
  const registered = join(REGISTRY, `${root.split('/').pop() as string}.json`);
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await stopCell(root, penv);
    if (!options.keepDir) await rm(root, { recursive: true, force: true });
    await unlink(registered).catch(() => undefined);
  };
  const messages = async (): Promise<string> => {
    const parts: string[] = [];
    for (const f of [join(qmasterSpool, 'messages'), ...(existsSync(execdSpool) ? readdirSync(execdSpool).map((d) => join(execdSpool, d, 'messages')) : [])]) {
      const text = await readFile(f, 'utf8').catch(() => '');
      if (text) parts.push(`--- ${f} (tail) ---\n${text.split('\n').slice(-15).join('\n')}`);
    }
    return parts.join('\n');
  };
  try {
    await mkdir(REGISTRY, { recursive: true });
    await writeFile(registered, JSON.stringify({ owner: process.pid, root, env }));
    for (const d of [common, join(qmasterSpool, 'job_scripts'), execdSpool]) await mkdir(d, { recursive: true });
    for (const l of ['bin', 'lib', 'utilbin', 'util']) await symlink(join(SYSTEM_ROOT, l), join(root, l));
    const host = hostname();
    await writeFile(join(common, 'act_qmaster'), `${host}\n`);
    await writeFile(join(common, 'host_aliases'), `${(await aliases(host)).join(' ')}\n`);
    await writeFile(
      join(common, 'bootstrap'),
      [
        'admin_user              root',
        'default_domain          none',
        'ignore_fqdn             true',
        'spooling_method         classic',
        'spooling_lib            libspoolc',
        `spooling_params         ${common};${qmasterSpool}`,
        'binary_path             /usr/sbin',
        `qmaster_spool_dir       ${qmasterSpool}`,
        'security_mode           none',
        'listener_threads        2',
        'worker_threads          2',
        'scheduler_threads       1',
        '',
      ].join('\n'),
    );
    const defaults = await readFile('/usr/share/gridengine/default-configuration', 'utf8');
    const conf = join(root, 'global.conf');
    await writeFile(
      conf,
      defaults
        .replace(/^execd_spool_dir .*$/m, `execd_spool_dir        ${execdSpool}`)
        // Jobs run as root here: min_uid/min_gid 0 must be set before execd starts.
        .replace(/^min_uid .*$/m, 'min_uid                0')
        .replace(/^min_gid .*$/m, 'min_gid                0')
        .replace(/^mailer .*$/m, 'mailer                 /bin/true')
        // Not as login shells: a login shell runs the user's profile first (here root's pyenv
        // rehash, which can hang on its lock) and every job pays for it.
        .replace(/^login_shells .*$/m, 'login_shells           NONE')
        .replace(/flush_time=\S+/, 'flush_time=00:00:01'),
    );
    await must('spoolinit', join(LIB, 'spoolinit'), ['classic', 'libspoolc', `${common};${qmasterSpool}`, 'init'], penv);
    await must('spooldefaults configuration', join(LIB, 'spooldefaults'), ['configuration', conf], penv);
    await must('spooldefaults complexes', join(LIB, 'spooldefaults'), ['complexes', join(SYSTEM_ROOT, 'util/resources/centry')], penv);
    await must('spooldefaults usersets', join(LIB, 'spooldefaults'), ['usersets', join(SYSTEM_ROOT, 'util/resources/usersets')], penv);
    await must('spooldefaults managers', join(LIB, 'spooldefaults'), ['managers', 'root'], penv);

    await must('sge_qmaster', '/usr/sbin/sge_qmaster', [], penv);
    await waitFor('sge_qmaster (qconf -sh)', async () => (await run(join(LIB, 'qconf'), ['-sh'], penv)).code === 0, 15_000, messages);

    const qconf = (what: string, ...args: string[]) => must(what, join(LIB, 'qconf'), args, penv);
    const file = async (name: string, text: string): Promise<string> => {
      const p = join(root, name);
      await writeFile(p, text);
      return p;
    };
    await qconf('adding the submit host', '-as', host);
    await qconf('adding the exec host', '-Ae', await file('exechost', `hostname ${host}\nload_scaling NONE\ncomplex_values NONE\nuser_lists NONE\nxuser_lists NONE\nprojects NONE\nxprojects NONE\nusage_scaling NONE\nreport_variables NONE\n`));
    await qconf('adding @allhosts', '-Ahgrp', await file('hostgroup', `group_name @allhosts\nhostlist ${host}\n`));
    const sched = (await qconf('reading the scheduler configuration', '-ssconf'))
      .replace(/^schedule_interval .*$/m, 'schedule_interval 0:0:1')
      .replace(/^flush_submit_sec .*$/m, 'flush_submit_sec 1')
      .replace(/^flush_finish_sec .*$/m, 'flush_finish_sec 1')
      .replace(/^schedd_job_info .*$/m, 'schedd_job_info false');
    await qconf('setting the scheduler configuration', '-Msconf', await file('sconf', sched));
    const queue = (await qconf('reading the queue template', '-sq'))
      .replace(/^qname .*$/m, 'qname all.q')
      .replace(/^hostlist .*$/m, 'hostlist @allhosts')
      .replace(/^slots .*$/m, `slots ${slots}`)
      .replace(/^shell .*$/m, 'shell /bin/sh')
      .replace(/^pe_list .*$/m, 'pe_list NONE')
      // This box's load would otherwise put the queue in alarm state and stop scheduling.
      .replace(/^load_thresholds .*$/m, 'load_thresholds NONE');
    await qconf('adding all.q', '-Aq', await file('queue', queue));
    await qconf('adding held.q', '-Aq', await file('held-queue', queue.replace(/^qname .*$/m, 'qname held.q').replace(/^slots .*$/m, 'slots 0')));

    await must('sge_execd', '/usr/sbin/sge_execd', [], penv);
    await waitFor(
      'sge_execd (all.q takes jobs)',
      async () => {
        const r = await run(join(LIB, 'qstat'), ['-f', '-q', 'all.q'], penv);
        const line = r.stdout.split('\n').find((l) => l.startsWith('all.q@'));
        // Columns: queuename qtype resv/used/tot. load_avg arch [states]; a load of -NA- or a state (au…) means not yet.
        return line !== undefined && !/-NA-/.test(line) && line.trim().split(/\s+/).length === 5;
      },
      20_000,
      messages,
    );
    return { env, root, host, slots, heldQueue: 'held.q', accountingFile: join(common, 'accounting'), stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
