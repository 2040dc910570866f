/**
 * Grid Engine as a grid-core scheduler, through its CLI (locally or over a `CommandRunner`,
 * e.g. ssh to a login node): `qsub -terse` with the wrapper as a submit script, ONE
 * `qstat -xml` per status check, `qacct -j` only for jobs that left `qstat` without an
 * exit-code file that says how they ended, one `qdel` per batch of cancels.
 */
import { CairnError } from '@cairn/core';
import { localCommandRunner, runChecked, type CommandResult, type CommandRunOptions, type GridScheduler, type SchedulerJobInfo } from '@cairn/grid';
import type { SgeExecutorOptions } from './options.js';
import { parseQacct, parseQstat } from './parse.js';
import { parseSubmitted, qsubArgs } from './qsub.js';
import { accountingInfo, qstatInfo } from './states.js';

/** Counters of calls to Grid Engine (for tests and diagnostics). */
export interface SgeStats {
  /** `qsub` runs. */
  qsubCalls: number;
  /** `qstat` runs. */
  qstatCalls: number;
  /** `qacct` runs (one per job id looked up). */
  qacctCalls: number;
  /** `qdel` runs. */
  qdelCalls: number;
}

/** `qacct` lookups in flight at once (each reads the whole accounting file). */
const QACCT_PARALLEL = 4;
/** Between accounting lookups while waiting for a record. */
const ACCOUNTING_RETRY_MS = 400;
const GONE = /does not exist|is already in deletion|job .* not found/i;

/** The error for a Grid Engine command that could not run or failed. */
export function commandError(argv: readonly string[], r: CommandResult, what: string): CairnError {
  const detail = (r.stderr || r.stdout).trim().split('\n').slice(-10).join('\n');
  const hint =
    r.code === 127
      ? `${argv[0]} was not found: install the Grid Engine client (gridengine-client) on this host or the login node, and check SGE_ROOT.`
      : /unable to contact qmaster|can't unpack|commlib error|unable to send message/i.test(detail)
        ? 'The qmaster is unreachable: check that sge_qmaster runs and SGE_ROOT, SGE_CELL and SGE_QMASTER_PORT point at its cell.'
        : /unknown resource|unknown attribute|denied/i.test(detail)
          ? 'The cell refused the request: check the resources (-l, -pe, -q) against `qconf -sc` and `qconf -sql`.'
          : 'Check the command and its stderr above.';
  return new CairnError('CAIRN_REMOTE', `${what} failed: \`${argv.join(' ')}\` exited with ${r.code}: ${detail || '(no output)'}. ${hint}`, { retryable: r.code !== 127 });
}

/** Creates the Grid Engine adapter; `stats` counts its calls. */
export function sgeScheduler(options: SgeExecutorOptions, stats: SgeStats): GridScheduler {
  const exec = options.exec ?? localCommandRunner({ env: options.env ?? {} });
  const run = (argv: string[], what: string, ok?: (r: CommandResult) => boolean, options?: CommandRunOptions): Promise<CommandResult> => runChecked(exec, argv, what, (r) => commandError(argv, r, what), ok, options);
  let accounting = options.accounting ?? true;
  const delayMs = options.accountingDelayMs ?? 2000;
  /** Ids the accounting lag was already waited for (once per job). */
  const waited = new Set<string>();

  const qacct = async (id: string): Promise<Map<string, SchedulerJobInfo>> => {
    stats.qacctCalls++;
    const r = await exec.run(['qacct', '-j', id]).catch((e: unknown) => ({ code: 1, stdout: '', stderr: String(e) }));
    const out = new Map<string, SchedulerJobInfo>();
    if (r.code !== 0) {
      // No accounting file at all (accounting switched off): stop asking.
      if (/accounting file|can't open|No such file/i.test(r.stderr)) accounting = false;
      return out;
    }
    for (const [key, record] of parseQacct(r.stdout)) out.set(key, accountingInfo(record));
    return out;
  };

  return {
    name: 'sge',
    label: 'Grid Engine',
    idKey: 'sgeJobId',
    transport: 'cli',
    arrayTaskVar: 'SGE_TASK_ID',
    enforcedLimit: (seconds) => Math.max(1, Math.ceil(seconds)),
    async submit(request) {
      const argv = ['qsub', ...qsubArgs(request, options)];
      stats.qsubCalls++;
      // -V: the runner's variables that hold a secret's value stay behind (qstat -j would show them).
      const r = await run(argv, 'Submitting a Grid Engine job', undefined, { unsetEnv: request.hideEnv });
      const id = parseSubmitted(r.stdout);
      if (id === undefined) throw commandError(argv, { ...r, stderr: `unexpected output: ${r.stdout}` }, 'Submitting a Grid Engine job');
      return id;
    },
    taskId: (arrayId, index) => `${arrayId}.${index}`,
    async query(ids) {
      const out = new Map<string, SchedulerJobInfo>();
      if (ids.length === 0) return out;
      stats.qstatCalls++;
      const r = await run(['qstat', '-xml'], 'Checking Grid Engine jobs');
      const listed = parseQstat(r.stdout);
      for (const id of ids) {
        const state = listed.get(id);
        if (state !== undefined) out.set(id, qstatInfo(state));
      }
      return out;
    },
    async finished(ids) {
      const out = new Map<string, SchedulerJobInfo>();
      const lookup = async (wanted: readonly string[]): Promise<void> => {
        // qacct takes one job at a time; an array's tasks all come with its id.
        const bases = [...new Set(wanted.map((id) => id.split('.')[0] as string))];
        for (let i = 0; i < bases.length; i += QACCT_PARALLEL) {
          for (const found of await Promise.all(bases.slice(i, i + QACCT_PARALLEL).map(qacct))) {
            for (const [key, info] of found) if (wanted.includes(key)) out.set(key, info);
          }
        }
      };
      if (!accounting || ids.length === 0) return out;
      await lookup(ids);
      // Just gone from qstat: its record may not be written yet. Wait for it, once per job.
      const deadline = Date.now() + delayMs;
      let missing = ids.filter((id) => !out.has(id) && !waited.has(id));
      for (const id of missing) waited.add(id);
      while (missing.length > 0 && accounting && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, ACCOUNTING_RETRY_MS));
        await lookup(missing);
        missing = missing.filter((id) => !out.has(id));
      }
      return out;
    },
    async cancel(ids) {
      if (ids.length === 0) return;
      stats.qdelCalls++;
      await run(['qdel', ...ids], 'Cancelling Grid Engine jobs', (x) => x.code === 0 || GONE.test(`${x.stdout}\n${x.stderr}`));
    },
  };
}
