/** `cairn status [step]`: what the store holds, one line per step in DAG order; or one step's whole record. */
import { isStale } from '@cairn/runner';
import { loadConfig } from '../config.js';
import { out, type CliContext } from '../context.js';
import { paint, STORED_STATES, type StoredStateName } from '../states.js';
import { dagOrder, type StoredStep } from '../store-scan.js';
import { openStore } from '../store-view.js';
import { formatDuration, formatTable } from '../table.js';
import { resolveStoredStep } from './logs.js';
import { type CheckpointSummary, describeCheckpoints } from '../checkpoints.js';
import { printStepRecord } from './step-record.js';

/** Options of `cairn status`. */
export interface StatusCommandOptions {
  /** Store prefix. */
  readonly prefix?: string;
  /** Print JSON. */
  readonly json?: boolean;
  /** The pipeline module: a name means the build it references now (default: the newest build). */
  readonly pipeline?: string;
}

/** One step's status as `cairn status` shows it. */
export interface StatusRow {
  /** Output path relative to the prefix. */
  readonly step: string;
  /** Step name. */
  readonly name: string | null;
  /** `nameWithHash`. */
  readonly nameWithHash: string | null;
  /** SUCCESS, FAILED, DEP_FAILED, CANCELLED; `RUNNING` while a live lease is held; `STALE_LEASE` for a dead holder; `UNKNOWN`. */
  readonly status: string;
  /** Start of the last run of the step (epoch ms). */
  readonly start: number | null;
  /** End (epoch ms). */
  readonly end: number | null;
  /** Duration (ms). */
  readonly durationMs: number | null;
  /** Attempts in the last run of the step. */
  readonly attempts: number;
  /** Of them, attempts that were preempted (retried from `preemptionRetries`). */
  readonly preempted: number;
  /** The step's checkpoint directory (kept by the step, or left by an unfinished run); null when none. */
  readonly checkpoints: { readonly generation: number; readonly files: number; readonly bytes: number } | null;
  /** Executor of the last attempt. */
  readonly executor: string | null;
  /** Job id of the last attempt. */
  readonly jobId: string | null;
  /** `host:pid (run …)` of the lease holder, when a lease is held. */
  readonly leaseHolder: string | null;
  /** Final error message (FAILED). */
  readonly error: string | null;
  /** Why a file could not be read. */
  readonly problem: string | null;
}

/** Builds the status row of one stored step; a lease not refreshed for `staleMs` is stale (`leases.staleMs` of the config). */
export function statusRow(s: StoredStep, staleMs: number, now = Date.now(), checkpoints: CheckpointSummary | null = null): StatusRow {
  const r = s.record;
  let status: string = s.status ?? 'UNKNOWN';
  let leaseHolder: string | null = null;
  if (s.lease !== null) {
    const h = s.lease.holder;
    leaseHolder = h ? `${h.host}:${h.pid} (run ${h.runId})` : 'unreadable lease';
    status = isStale(s.lease, staleMs, now) ? 'STALE_LEASE' : 'RUNNING';
  }
  const last = r?.attempts?.at(-1);
  return {
    step: s.rel,
    name: r?.name ?? null,
    nameWithHash: r?.nameWithHash ?? null,
    status,
    start: r?.timings?.start ?? null,
    end: r?.timings?.end ?? null,
    durationMs: r?.timings?.durationMs ?? null,
    attempts: r?.attempts?.length ?? 0,
    preempted: r?.attempts?.filter((a) => a.state === 'preempted').length ?? 0,
    checkpoints: checkpoints === null ? null : { generation: checkpoints.generation, files: checkpoints.files, bytes: checkpoints.bytes },
    executor: r?.executor ?? last?.executor ?? null,
    jobId: r?.job?.jobId ?? last?.jobId ?? null,
    leaseHolder,
    error: r?.error?.message ?? null,
    problem: s.problem ?? null,
  };
}

/** Prints the status of every step in the store, in DAG order; given a step, its whole record. */
export async function statusCommand(ctx: CliContext, options: StatusCommandOptions, selector?: string): Promise<number> {
  const config = await loadConfig({ config: ctx.configFile, prefix: options.prefix }, ctx.env, ctx.cwd);
  const view = await openStore(config);
  const prefix = view.prefix;
  if (selector !== undefined) {
    await printStepRecord(ctx, view, await resolveStoredStep(ctx, view, selector, 'cairn status', config, options.pipeline), options.json === true);
    return 0;
  }
  const steps = dagOrder(await view.scan());
  const found = await Promise.all(steps.map((s) => view.checkpoints(s.path)));
  const rows = steps.map((s, i) => statusRow(s, view.staleMs, Date.now(), found[i] ?? null));
  if (options.json) {
    out(ctx, JSON.stringify({ prefix, steps: rows }, null, 2));
    return 0;
  }
  if (rows.length === 0) {
    out(ctx, `${prefix}: no steps yet.`);
    return 0;
  }
  const c = ctx.colors;
  const time = (ms: number | null) => (ms === null ? '-' : new Date(ms).toISOString().replace('T', ' ').slice(0, 19));
  const table = formatTable(
    ['step', 'status', 'started', 'took', 'tries', 'executor', 'job', 'lease holder'],
    rows.map((r) => [
      r.step,
      paint(c, STORED_STATES[r.status as StoredStateName], r.status),
      time(r.start),
      r.durationMs === null ? '-' : formatDuration(r.durationMs),
      r.preempted > 0 ? `${r.attempts} (${r.preempted} preempted)` : String(r.attempts),
      r.executor ?? '-',
      r.jobId ?? '-',
      r.leaseHolder ?? '',
    ]),
  );
  out(ctx, table);
  const counts = new Map<string, number>();
  for (const r of rows) counts.set(r.status, (counts.get(r.status) ?? 0) + 1);
  out(ctx, c.dim(`${rows.length} step(s): ${[...counts].map(([k, v]) => `${v} ${k}`).join(', ')}`));
  rows.forEach((r, i) => {
    if (r.error !== null && r.status !== 'SUCCESS') out(ctx, `${c.red('✗')} ${r.step}: ${r.error.split('\n')[0]}`);
    if (r.problem !== null) out(ctx, `${c.yellow('!')} ${r.step}: ${r.problem}`);
    const k = found[i];
    if (k != null) out(ctx, `${c.dim('⟳')} ${r.step}: checkpoints ${describeCheckpoints(k)} ${c.dim(`(${view.rel(k.root)})`)}`);
  });
  if (rows.some((r) => r.status === 'FAILED')) out(ctx, c.dim('`cairn status <step>` shows a step\'s whole record; `cairn logs <step>` its logs and error.'));
  return 0;
}
