/**
 * The run report: one self-contained HTML page (inline CSS, JS and data). The header's counts;
 * a Gantt timeline of every attempt (`timeline.ts`), or, when nothing ran, which runs built the
 * cached steps (linked); then failures with their errors, stacks and log tails, the steps that
 * did not run because a dependency failed, every step with its CPU time, peak memory and exit
 * code, retries, and the cache hits.
 */
import { escapeHtml, htmlPage } from '../html.js';
import { ATTEMPT_STATES } from '../states.js';
import { formatDuration } from '../table.js';
import { formatBytes, formatGpu, peakMemoryOf } from '../usage.js';
import { builderRuns } from './load.js';
import type { ReportAttempt, ReportData, ReportStep } from './model.js';
import { TIMELINE_SCRIPT } from './timeline.js';

/** Bar colour of each attempt end state (and outcome). */
export const ATTEMPT_COLORS: Readonly<Record<string, string>> = Object.fromEntries(Object.entries(ATTEMPT_STATES).map(([k, v]) => [k, v.color]));

/** Rows of the steps table at most (the page stays light for 100k-step runs). */
const MAX_STEP_ROWS = 2000;

const CSS = `
* { box-sizing: border-box; }
body { margin: 0; font: 13px/1.45 system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: #1d2430; background: #ffffff; }
header { padding: 12px 16px; border-bottom: 1px solid #e3e6ea; background: #f7f8fa; }
h1 { font-size: 16px; margin: 0 0 4px; }
h2 { font-size: 14px; margin: 18px 16px 6px; }
.stats { display: flex; gap: 18px; flex-wrap: wrap; color: #5b6472; }
.stats b { color: #1d2430; }
.ok { color: #2c7a38; } .bad { color: #c0392b; } .warn { color: #b7791f; }
#timeline-wrap { position: relative; margin: 0 16px; border: 1px solid #e3e6ea; border-radius: 6px; overflow: auto; max-height: 70vh; }
#timeline { display: block; }
#tip { position: fixed; pointer-events: none; background: #1d2430; color: #fff; padding: 4px 8px; border-radius: 4px; font-size: 12px; display: none; z-index: 3; max-width: 480px; }
table { border-collapse: collapse; margin: 0 16px; min-width: 50%; }
th, td { text-align: left; padding: 3px 12px 3px 0; border-bottom: 1px solid #eef0f3; vertical-align: top; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
th { color: #5b6472; font-weight: 600; }
pre { background: #f7f8fa; border: 1px solid #e3e6ea; border-radius: 4px; padding: 6px 8px; margin: 4px 0 8px; max-height: 240px; overflow: auto; font-size: 12px; white-space: pre-wrap; }
pre.error { background: #fdf1f0; border-color: #f3c7c2; color: #7b241c; }
details { margin: 0 16px 6px; }
summary { cursor: pointer; }
.legend { display: flex; gap: 12px; margin: 6px 16px; color: #5b6472; }
.legend i { width: 12px; height: 12px; border-radius: 3px; display: inline-block; vertical-align: -2px; margin-right: 4px; }
.empty { color: #5b6472; margin: 0 16px; }
.notice { margin: 8px 16px; padding: 10px 12px; border: 1px solid #cfe3d3; background: #f1f8f2; border-radius: 6px; }
.outcome { display: inline-block; padding: 0 6px; border-radius: 3px; color: #fff; font-size: 12px; }
.muted { color: #5b6472; }
`;

const OUTCOME_COLORS: Readonly<Record<string, string>> = { ...ATTEMPT_COLORS, cached: '#7fb88a', skipped: '#9aa0a6', 'dep-failed': '#e08a8a' };

function durationOf(s: ReportStep): number {
  const a = s.attempts;
  if (a.length === 0) return 0;
  return Math.max(...a.map((x) => x.end)) - Math.min(...a.map((x) => x.start));
}

function sum(attempts: readonly ReportAttempt[], f: (a: ReportAttempt) => number | undefined): number | undefined {
  let total: number | undefined;
  for (const a of attempts) {
    const v = f(a);
    if (v !== undefined) total = (total ?? 0) + v;
  }
  return total;
}

function peak(attempts: readonly ReportAttempt[]): { bytes: number; kind: string } | undefined {
  let best: { bytes: number; kind: string } | undefined;
  for (const a of attempts) {
    const m = a.usage !== undefined ? peakMemoryOf(a.usage) : a.peakMemoryBytes !== undefined ? { bytes: a.peakMemoryBytes, kind: a.memoryKind === 'heap' ? 'heap' : 'rss' } : undefined;
    if (m !== undefined && (best === undefined || m.bytes > best.bytes)) best = m;
  }
  return best;
}

function exitOf(s: ReportStep): string {
  const last = s.attempts[s.attempts.length - 1];
  if (last === undefined) return '';
  if (last.signal) return last.signal;
  return last.exitCode === undefined || last.exitCode === null ? '' : String(last.exitCode);
}

const e = escapeHtml;

function outcomeTag(outcome: string): string {
  return `<span class="outcome" style="background:${OUTCOME_COLORS[outcome] ?? '#9aa0a6'}">${e(outcome)}</span>`;
}

function failureSection(failures: readonly ReportStep[]): string {
  if (failures.length === 0) return '<p class="empty">No failures.</p>';
  return failures
    .map((s) => {
      const last = s.attempts[s.attempts.length - 1];
      const where = last ? ` on ${e(last.executor)} @ ${e(last.host)}${last.jobId ? ` (job ${e(last.jobId)})` : ''}` : '';
      const exit = exitOf(s);
      const error = `<pre class="error">${e(s.errorStack ?? s.error ?? 'failed')}</pre>`;
      const tail = s.logTail && s.logTail.length > 0 ? `<div class="muted">last ${s.logTail.length} log line(s):</div><pre>${e(s.logTail.join('\n'))}</pre>` : '<p class="muted">The step wrote no log output.</p>';
      return `<details open><summary><b>${e(s.name)}</b> <code>${e(s.key)}</code>${where}${exit ? `, exit ${e(exit)}` : ''}: ${e(s.error ?? 'failed')}</summary>${error}${tail}</details>`;
    })
    .join('\n');
}

function stepRows(steps: readonly ReportStep[]): string {
  const rank: Record<string, number> = { failed: 0, cancelled: 1, 'dep-failed': 2, running: 3, succeeded: 4, skipped: 5, cached: 6 };
  const sorted = [...steps].sort((a, b) => (rank[a.outcome] ?? 9) - (rank[b.outcome] ?? 9) || durationOf(b) - durationOf(a));
  const rows = sorted.slice(0, MAX_STEP_ROWS).map((s) => {
    const last = s.attempts[s.attempts.length - 1];
    const cpu = sum(s.attempts, (a) => a.cpuMs);
    const mem = peak(s.attempts);
    return `<tr><td>${e(s.name)}</td><td><code>${e(s.key)}</code></td><td>${outcomeTag(s.outcome)}</td><td class="n">${s.attempts.length}</td><td class="n">${s.attempts.length > 0 ? e(formatDuration(durationOf(s))) : ''}</td><td class="n">${cpu === undefined ? '' : e(formatDuration(cpu))}</td><td class="n">${mem === undefined ? '' : `${e(formatBytes(mem.bytes))} <span class="muted">${mem.kind}</span>`}</td><td class="n">${e(exitOf(s))}</td><td class="n">${last?.usage !== undefined ? e(formatGpu(last.usage).replace(/^gpu /, '')) : ''}</td><td>${last ? e(`${last.executor} @ ${last.host}`) : ''}</td><td>${e(s.error ?? s.note ?? '')}</td></tr>`;
  });
  const more = sorted.length > MAX_STEP_ROWS ? `<p class="empty">…and ${sorted.length - MAX_STEP_ROWS} more step(s) (failures first, then the slowest).</p>` : '';
  return `<table id="steps"><tr><th>step</th><th>output</th><th>outcome</th><th class="n">attempts</th><th class="n">wall</th><th class="n">cpu</th><th class="n">peak memory</th><th class="n">exit</th><th class="n">gpu</th><th>where</th><th>error / note</th></tr>${rows.join('')}</table>${more}`;
}

function builtBySection(data: ReportData, ran: number): string {
  const runs = builderRuns(data);
  if (runs.length === 0) return '';
  const link = (runId: string) => (data.links?.[runId] ? `<a href="${e(data.links[runId] as string)}">run ${e(runId)}</a>` : `run ${e(runId)}`);
  const list = runs.map((r) => `<li>${link(r.runId)}, finished ${e(new Date(r.end).toISOString().replace('T', ' ').slice(0, 19))}: ${r.steps} step(s)</li>`).join('');
  // A run reports only what it looked at: dependencies of cached steps are not examined.
  const head = ran === 0 ? `<b>Nothing ran in this run</b>: the ${data.steps.length} step(s) it needed were already in the store (cached).` : `${data.steps.filter((s) => s.builtBy).length} step(s) were served from the store.`;
  return `<div class="notice" id="cached-notice">${head} They were built by:<ul>${list}</ul></div>`;
}

/** Renders the self-contained report page. */
export function renderReportHtml(data: ReportData): string {
  const count = (o: string) => data.steps.filter((s) => s.outcome === o).length;
  const retried = data.steps.filter((s) => s.attempts.length > 1);
  const failures = data.steps.filter((s) => s.outcome === 'failed');
  const depFailed = data.steps.filter((s) => s.outcome === 'dep-failed');
  const cached = data.steps.filter((s) => s.outcome === 'cached' || s.outcome === 'skipped');
  const ran = data.steps.filter((s) => s.attempts.length > 0);
  const cpuTotal = sum(ran.flatMap((s) => s.attempts), (a) => a.cpuMs);
  const stat = (label: string, n: number | string, cls = '') => `<span>${e(label)} <b class="${cls}">${e(String(n))}</b></span>`;
  const timeline =
    ran.length === 0
      ? `<p class="empty">No step ran in this run${cached.length > 0 ? ' (every step was cached)' : ''}.</p>`
      : `<div class="legend">${Object.entries(ATTEMPT_COLORS)
          .map(([k, v]) => `<span><i style="background:${v}"></i>${e(k)}</span>`)
          .join('')}</div>
<div id="timeline-wrap"><canvas id="timeline"></canvas></div>
<div id="tip"></div>`;
  const retryRows = retried
    .map((s) => `<tr><td>${e(s.name)}</td><td>${s.attempts.length}</td><td>${e(s.attempts.map((a) => a.state).join(' → '))}</td><td>${e(s.outcome)}</td></tr>`)
    .join('');
  const link = (runId: string) => (data.links?.[runId] ? `<a href="${e(data.links[runId] as string)}">${e(runId)}</a>` : e(runId));
  const cacheRows = cached.slice(0, MAX_STEP_ROWS).map((s) => `<tr><td>${e(s.name)}</td><td><code>${e(s.key)}</code></td><td>${e(s.outcome)}</td><td>${s.builtBy ? `built by run ${link(s.builtBy.runId)}` : ''}</td></tr>`).join('');
  const body = `
<header>
  <h1>cairn run ${e(data.runId)}</h1>
  <div class="stats">
    ${stat('started', new Date(data.start).toISOString().replace('T', ' ').slice(0, 19))}
    ${stat('wall time', formatDuration(data.end - data.start))}
    ${stat('steps', data.steps.length)}
    ${stat('succeeded', count('succeeded'), 'ok')}
    ${stat('cached', cached.length)}
    ${stat('failed', failures.length, failures.length > 0 ? 'bad' : '')}
    ${stat('not run (dependency failed)', depFailed.length, depFailed.length > 0 ? 'bad' : '')}
    ${stat('cancelled', count('cancelled'), count('cancelled') > 0 ? 'warn' : '')}
    ${stat('retried', retried.length, retried.length > 0 ? 'warn' : '')}
    ${cpuTotal !== undefined ? stat('cpu (measured)', formatDuration(cpuTotal)) : ''}
    ${stat('prefix', data.prefix)}
  </div>
</header>
${builtBySection(data, ran.length)}
<h2>Timeline (${ran.length} steps ran, by executor @ host)</h2>
${timeline}
<h2>Failures (${failures.length})</h2>
${failureSection(failures)}
<h2>Not run: a dependency failed (${depFailed.length})</h2>
${depFailed.length === 0 ? '<p class="empty">None.</p>' : `<table id="dep-failed"><tr><th>step</th><th>output</th><th>why</th></tr>${depFailed.map((s) => `<tr><td>${e(s.name)}</td><td><code>${e(s.key)}</code></td><td>${e(s.note ?? s.error ?? 'a dependency failed')}</td></tr>`).join('')}</table>`}
<h2>Steps (${data.steps.length})</h2>
${stepRows(data.steps)}
<p class="muted" style="margin:6px 16px">CPU time and peak memory are what each executor measures (<code>cairn report --trace trace.tsv</code> exports them per attempt): <b>process</b>, SSH, Slurm and SGE — the worker or program and every process it started (sampled from /proc, a lower bound); <b>threads</b> — the worker thread's CPU time plus its child processes', its V8 heap, and the children's resident memory; <b>inline</b> — command programs, and a best effort for slow function steps (the runner's own numbers); GPU memory and utilisation where <code>nvidia-smi</code> was on the host's PATH, blank where not measured.</p>
<h2>Retries (${retried.length})</h2>
${retried.length === 0 ? '<p class="empty">No step needed a retry.</p>' : `<table><tr><th>step</th><th>attempts</th><th>states</th><th>outcome</th></tr>${retryRows}</table>`}
<h2>Cache hits (${cached.length})</h2>
${cached.length === 0 ? '<p class="empty">None.</p>' : `<details><summary>${cached.length} step(s) served from the store</summary><table>${cacheRows}</table>${cached.length > MAX_STEP_ROWS ? `<p class="empty">…and ${cached.length - MAX_STEP_ROWS} more.</p>` : ''}</details>`}
`;
  const steps = data.steps.map((s) => ({ name: s.name, attempts: s.attempts }));
  return htmlPage({ title: `cairn report — ${data.runId}`, css: CSS, body, data: { start: data.start, end: data.end, steps, colors: ATTEMPT_COLORS }, script: TIMELINE_SCRIPT });
}
