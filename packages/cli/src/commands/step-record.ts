/**
 * `cairn status <step>`: one stored step in full: identity, status and lease, timings, every
 * attempt (executor, host, job, exit code, CPU time, peak memory, error), the final error with
 * its stack, config, dependencies, result, and where its logs are.
 */
import { attemptFilesIn, isStale, type AttemptUsage } from '@cairn/runner';
import { out, type CliContext } from '../context.js';
import { ATTEMPT_STATES, paint, STORED_STATES, type StoredStateName } from '../states.js';
import type { StoredStep } from '../store-scan.js';
import type { StoreView } from '../store-view.js';
import { formatDuration } from '../table.js';
import { formatUsage } from '../usage.js';

/** Lines of a JSON value shown at most (config, result). */
const MAX_VALUE_LINES = 30;

function time(ms: number | undefined): string {
  return ms === undefined ? '-' : new Date(ms).toISOString().replace('T', ' ').slice(0, 23);
}

function value(v: unknown): string[] {
  const lines = (JSON.stringify(v, null, 2) ?? 'undefined').split('\n');
  return lines.length > MAX_VALUE_LINES ? [...lines.slice(0, MAX_VALUE_LINES), `… (${lines.length - MAX_VALUE_LINES} more lines; --json prints all)`] : lines;
}

/** Usage of each recorded attempt, by attempt number. */
export async function attemptUsages(view: StoreView, step: StoredStep): Promise<Map<number, AttemptUsage>> {
  const usages = new Map<number, AttemptUsage>();
  for (const a of step.record?.attempts ?? []) {
    // The executor's files of an attempt are committed inside the output directory.
    const u = await view.readUsage(attemptFilesIn(step.path, a.attempt).scratch);
    if (u !== null) usages.set(a.attempt, u);
  }
  return usages;
}

/** Prints one step's record (or, with `json`, the record and what the store says around it). */
export async function printStepRecord(ctx: CliContext, view: StoreView, step: StoredStep, json: boolean): Promise<void> {
  const prefix = view.prefix;
  const r = step.record;
  const usages = await attemptUsages(view, step);
  const leaseState = step.lease === null ? null : isStale(step.lease, view.staleMs) ? 'stale' : 'live';
  const status: StoredStateName = step.lease !== null ? (leaseState === 'stale' ? 'STALE_LEASE' : 'RUNNING') : (step.status ?? 'UNKNOWN');
  if (json) {
    out(ctx, JSON.stringify({ prefix, step: step.rel, path: step.path, status, lease: step.lease?.holder ?? null, leaseState, problem: step.problem ?? null, usage: Object.fromEntries(usages), record: r }, null, 2));
    return;
  }
  const c = ctx.colors;
  const row = (k: string, v: string) => out(ctx, `  ${c.dim(k.padEnd(12))} ${v}`);
  out(ctx, `${c.bold(r?.name ?? step.rel)} ${c.dim(r?.nameWithHash ?? '')}`);
  row('output', step.path);
  row('status', paint(c, STORED_STATES[status], status));
  if (step.lease !== null) {
    const h = step.lease.holder;
    row('lease', `${leaseState} — ${h ? `${h.host}:${h.pid} (run ${h.runId})` : 'unreadable holder'}`);
  }
  if (step.problem !== undefined) row('problem', c.yellow(step.problem));
  if (r === null) {
    out(ctx, c.dim('  No record: the step has not finished an attempt here (or its record was removed).'));
    return;
  }
  if (r.version !== undefined) row('version', r.version);
  if (r.fingerprint !== undefined) row('fingerprint', r.fingerprint);
  row('run', r.runId);
  row('started', time(r.timings?.start));
  row('took', r.timings ? formatDuration(r.timings.durationMs) : '-');
  row('executor', `${r.executor}${r.job ? ` (job ${r.job.jobId})` : ''}`);
  row('deps', r.deps.length === 0 ? '-' : r.deps.map((d, i) => `${d}${r.depPaths[i] ? c.dim(` ${r.depPaths[i]}`) : ''}`).join('\n' + ' '.repeat(15)));
  out(ctx, `  ${c.dim('attempts')}`);
  for (const a of r.attempts) {
    const u = usages.get(a.attempt);
    const facts = [`${a.executor} @ ${a.host}`, time(a.start), formatDuration(a.end - a.start), a.jobId ? `job ${a.jobId}` : '', u ? formatUsage(u) : '', a.adopted ? 'adopted' : ''].filter(Boolean);
    out(ctx, `    #${a.attempt} ${paint(c, ATTEMPT_STATES[a.state], a.state.padEnd(10))} ${facts.join(c.dim(' · '))}`);
    if (a.error !== undefined) out(ctx, `       ${c.red(a.error.message.split('\n')[0] ?? '')}`);
  }
  if (r.error !== undefined) {
    out(ctx, `  ${c.dim('error')}`);
    const text = r.error.stack ?? `${r.error.name}: ${r.error.message}`;
    for (const line of text.split('\n')) out(ctx, `    ${line}`);
  }
  out(ctx, `  ${c.dim('config')}`);
  for (const line of value(r.config)) out(ctx, `    ${line}`);
  if (r.result !== undefined) {
    out(ctx, `  ${c.dim('result')}`);
    for (const line of value(r.result)) out(ctx, `    ${line}`);
  }
  row('logs', `cairn logs ${step.rel} --prefix ${prefix}`);
}
