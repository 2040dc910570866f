/**
 * The `cairn ui` page: runs list, a run's live DAG, a step's page, the trace. Data comes from
 * the server's JSON API and its live stream (src/web/server.ts); types from src/web/model.ts.
 */
import type { UiAttempt, UiLog, UiRun, UiRunSummary, UiStateChange, UiStepDetail } from '../../src/web/model.js';
import { DagView, type DagStep } from './dag.js';
import { badge, bytes, duration, el, fill, when } from './dom.js';
import './style.css';

const main = document.getElementById('main')!;
const banner = document.getElementById('banner')!;
const crumbs = document.getElementById('crumbs')!;
let info: { prefix: string; allowActions: boolean } = { prefix: '', allowActions: false };

/** What tests and the bench read. */
const api = { ready: false, view: '', run: null as UiRun | null, dag: null as DagView | null, steps: [] as DagStep[], firstRenderMs: 0, banner: () => (banner.hidden ? '' : (banner.textContent ?? '')) };
(globalThis as unknown as { cairnUi: typeof api }).cairnUi = api;

function showBanner(text: string | null): void {
  banner.hidden = text === null;
  banner.textContent = text ?? '';
}

async function getJson<T>(path: string): Promise<T> {
  const r = await fetch(path, { headers: { accept: 'application/json' } });
  const body = (await r.json().catch(() => ({ error: `HTTP ${r.status}` }))) as T & { error?: string; store?: boolean };
  if (r.status === 503) showBanner(body.error ?? 'The store cannot be read.');
  if (!r.ok) throw new Error(body.error ?? `HTTP ${r.status}`);
  return body;
}

async function post(path: string): Promise<string> {
  const r = await fetch(path, { method: 'POST', headers: { 'x-cairn-action': '1' } });
  const body = (await r.json().catch(() => ({}))) as { message?: string; error?: string };
  return body.message ?? body.error ?? `HTTP ${r.status}`;
}

let stream: EventSource | null = null;
function openStream(runId: string | undefined, seq: number, known: number, on: { runs?: (r: UiRunSummary[]) => void; changes?: (c: { seq: number; changes: UiStateChange[]; finished: boolean; end: number }) => void }): void {
  stream?.close();
  const q = new URLSearchParams();
  if (runId !== undefined) q.set('run', runId);
  q.set('seq', String(seq));
  q.set('known', String(known));
  stream = new EventSource(`api/stream?${q}`);
  stream.addEventListener('store', (e) => {
    const d = JSON.parse((e as MessageEvent).data as string) as { ok: boolean; message?: string };
    showBanner(d.ok ? null : (d.message ?? 'The store cannot be read.'));
  });
  stream.addEventListener('error', () => showBanner('Lost the connection to cairn ui; reconnecting…'));
  stream.addEventListener('open', () => banner.textContent?.startsWith('Lost the connection') && showBanner(null));
  if (on.runs) stream.addEventListener('runs', (e) => on.runs!(JSON.parse((e as MessageEvent).data as string) as UiRunSummary[]));
  if (on.changes) stream.addEventListener('changes', (e) => on.changes!(JSON.parse((e as MessageEvent).data as string)));
}

function countsText(counts: Readonly<Record<string, number>>): string {
  return Object.entries(counts)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${n} ${k}`)
    .join(' · ');
}

// ---- runs list -------------------------------------------------------------------------
async function runsView(): Promise<void> {
  fill(crumbs);
  const body = el('tbody');
  const empty = el('p', { class: 'empty', hidden: '' }, 'No runs in this store yet. Start one with `cairn run` (its journal appears here live).');
  fill(main, el('h1', {}, 'Runs'), empty, el('table', { class: 'runs' }, el('thead', {}, el('tr', {}, ...['run', 'state', 'started', 'duration', 'steps', 'counts', 'targets', 'host'].map((h) => el('th', {}, h)))), body));
  const render = (runs: UiRunSummary[]) => {
    empty.hidden = runs.length > 0;
    fill(
      body,
      ...runs.map((r) =>
        el(
          'tr',
          { 'data-run': r.runId },
          el('td', {}, el('a', { href: `#/run/${encodeURIComponent(r.runId)}` }, r.runId)),
          el('td', {}, badge(r.running ? 'running' : (r.counts.failed ?? 0) > 0 ? 'failed' : 'succeeded')),
          el('td', {}, when(r.start)),
          el('td', {}, duration(r.end - r.start)),
          el('td', {}, r.steps),
          el('td', { class: 'counts' }, countsText(r.counts), r.corruptLines > 0 ? ` · ${r.corruptLines} unreadable journal line(s)` : '', r.source === 'records' ? ' (from step records: no journal)' : ''),
          el('td', {}, r.targets.join(', ')),
          el('td', {}, [r.user, r.host].filter(Boolean).join('@')),
        ),
      ),
    );
  };
  const data = await getJson<{ runs: UiRunSummary[] }>('api/runs');
  render(data.runs);
  api.view = 'runs';
  api.ready = true;
  openStream(undefined, 0, 0, { runs: render });
}

// ---- a run's DAG -----------------------------------------------------------------------
async function runView(runId: string): Promise<void> {
  const t0 = performance.now();
  fill(crumbs, ' / ', el('a', { href: `#/run/${encodeURIComponent(runId)}` }, runId));
  const run = await getJson<UiRun>(`api/runs/${encodeURIComponent(runId)}`);
  const steps: DagStep[] = run.stepList.map((s) => ({ name: s.name, key: s.key, deps: s.deps, state: s.state }));
  const counts = el('span', { id: 'counts' });
  const search = el('input', { id: 'search', type: 'search', placeholder: 'search steps (Enter: next)', autocomplete: 'off' });
  const found = el('span', { id: 'found' });
  const side = el('aside', { id: 'side' }, el('p', { class: 'hint' }, 'Click a step: its upstream and downstream stay lit. Double-click opens its page. Drag to pan, wheel to zoom.'));
  const canvas = el('canvas', { id: 'dag' });
  const cancel = info.allowActions ? el('button', { id: 'cancel' }, 'Cancel run') : null;
  const stateLine = el('span', { id: 'run-state' });
  fill(
    main,
    el('div', { class: 'toolbar' }, el('strong', {}, runId), stateLine, counts, search, found, el('a', { href: `#/run/${encodeURIComponent(runId)}/trace` }, 'trace'), el('button', { id: 'fit' }, 'fit'), cancel),
    el('div', { class: 'dagwrap' }, canvas, side),
  );
  const dag = new DagView(canvas);
  api.dag = dag;
  api.steps = steps;
  api.run = run;
  const tally = () => {
    const c: Record<string, number> = {};
    for (const s of steps) c[s.state] = (c[s.state] ?? 0) + 1;
    fill(counts, countsText(c));
    fill(stateLine, badge(run.running ? 'running' : 'finished'));
  };
  const showSide = (i: number) => {
    const s = steps[i];
    if (s === undefined) return fill(side, el('p', { class: 'hint' }, 'Nothing selected.'));
    fill(
      side,
      el('h3', {}, s.name),
      el('p', {}, badge(s.state)),
      el('p', { class: 'mono' }, s.key),
      el('p', {}, `${s.deps.length} dependencies`),
      el('a', { href: `#/run/${encodeURIComponent(runId)}/step/${i}`, id: 'open-step' }, 'open step page →'),
    );
  };
  dag.onSelect = showSide;
  dag.onOpen = (i) => (location.hash = `#/run/${encodeURIComponent(runId)}/step/${i}`);
  dag.setSteps(steps);
  dag.fit();
  dag.draw();
  tally();
  let hits: number[] = [];
  let hitAt = 0;
  search.addEventListener('input', () => {
    hits = dag.search(search.value);
    hitAt = 0;
    fill(found, search.value.trim() === '' ? '' : `${hits.length} found`);
    if (hits.length > 0) (dag.centerOn(hits[0]!), dag.select(hits[0]!), showSide(hits[0]!));
  });
  search.addEventListener('keydown', (e) => {
    if (e.key !== 'Enter' || hits.length === 0) return;
    hitAt = (hitAt + 1) % hits.length;
    dag.centerOn(hits[hitAt]!);
    dag.select(hits[hitAt]!);
    showSide(hits[hitAt]!);
  });
  document.getElementById('fit')!.addEventListener('click', () => dag.fit());
  cancel?.addEventListener('click', async () => {
    if (confirm(`Cancel run ${runId}? Its running steps are cancelled and record CANCELLED.`)) showBanner(await post(`api/runs/${encodeURIComponent(runId)}/cancel`));
  });
  openStream(runId, run.seq, steps.length, {
    changes: (d) => {
      let added = false;
      for (const [i, state, , , , name, key, deps] of d.changes) {
        if (steps[i] === undefined) {
          steps[i] = { name: name ?? `#${i}`, key: key ?? '', deps: deps ?? [], state };
          added = true;
        } else steps[i]!.state = state;
      }
      (run as { running: boolean }).running = !d.finished;
      if (added) dag.setSteps(steps);
      else dag.redraw();
      tally();
      if (dag.selected >= 0) showSide(dag.selected);
    },
  });
  api.firstRenderMs = performance.now() - t0;
  api.view = 'run';
  api.ready = true;
}

// ---- a step's page ---------------------------------------------------------------------
/** Usage fields with a column of their own; any other field an executor wrote is listed under "other". */
const USAGE_SHOWN = new Set(['executor', 'cpuMs', 'cpuScope', 'peakMemoryBytes', 'memoryKind', 'wallMs', 'exitCode', 'signal']);

function usageCells(u: UiAttempt['usage']): Node[] {
  if (u === null) return [el('td', { colspan: '5', class: 'muted' }, 'not measured')];
  const f = (k: string) => (typeof u[k] === 'number' ? (u[k] as number) : undefined);
  const gpu = Object.keys(u).filter((k) => /^gpu/i.test(k));
  const other = Object.keys(u).filter((k) => !USAGE_SHOWN.has(k) && !gpu.includes(k));
  return [
    el('td', { 'data-k': 'cpu', 'data-v': String(f('cpuMs') ?? '') }, f('cpuMs') === undefined ? 'not measured' : `${duration(f('cpuMs'))}${u.cpuScope === 'thread' ? ' (thread)' : ''}`),
    el('td', { 'data-k': 'mem', 'data-v': String(f('peakMemoryBytes') ?? '') }, f('peakMemoryBytes') === undefined ? 'not measured' : `${bytes(f('peakMemoryBytes'))} ${u.memoryKind === 'heap' ? 'heap' : 'peak rss'}`),
    el('td', { 'data-k': 'wall', 'data-v': String(f('wallMs') ?? '') }, f('wallMs') === undefined ? 'not measured' : duration(f('wallMs'))),
    el('td', { 'data-k': 'gpu' }, gpu.length === 0 ? 'not measured' : gpu.map((k) => `${k} ${JSON.stringify(u[k])}`).join(' · ')),
    el('td', { 'data-k': 'other', class: 'mono' }, other.map((k) => `${k} ${JSON.stringify(u[k])}`).join(' · ')),
  ];
}

async function stepView(runId: string, index: number): Promise<void> {
  const base = `api/runs/${encodeURIComponent(runId)}/steps/${index}`;
  const d = await getJson<UiStepDetail>(base);
  fill(crumbs, ' / ', el('a', { href: `#/run/${encodeURIComponent(runId)}` }, runId), ' / ', d.name);
  const rec = (d.record ?? {}) as Record<string, unknown>;
  const logPre = el('pre', { id: 'log', class: 'log' });
  const logHead = el('h2', {}, 'Log');
  const link = (x: { index: number; name: string }) => el('a', { href: `#/run/${encodeURIComponent(runId)}/step/${x.index}` }, x.name);
  const unlock = info.allowActions && d.lease?.stale === true ? el('button', { id: 'unlock' }, 'Unlock stale lease') : null;
  fill(
    main,
    el('h1', { id: 'step-name' }, d.name, ' ', badge(d.state)),
    d.problem !== undefined ? el('p', { class: 'problem', id: 'problem' }, `Corrupt or unreadable: ${d.problem}`) : null,
    d.error !== undefined ? el('p', { class: 'error', id: 'error' }, d.error) : null,
    d.note !== undefined ? el('div', {}, el('h2', {}, d.state === 'dep-failed' ? 'Why it did not run' : 'Why it ran (explain)'), el('pre', { id: 'note' }, d.note)) : null,
    el(
      'table',
      { class: 'facts' },
      el('tbody', {},
        ...([
          ['key', d.key],
          ['status', d.status ?? '–'],
          ['identity', String(rec.nameWithHash ?? '–')],
          ['version', String(rec.version ?? '–')],
          ['fingerprint', String(rec.fingerprint ?? '–')],
          ['executor', String(rec.executor ?? '–')],
          ['run', String(rec.runId ?? '–')],
          ['lease', d.lease === null ? 'none' : `${JSON.stringify(d.lease.holder)}${d.lease.stale ? ' (stale)' : ''}`],
        ] as const).map(([k, v]) => el('tr', {}, el('th', {}, k), el('td', { class: 'mono' }, v))),
      ),
    ),
    unlock,
    el('h2', {}, 'Dependencies'),
    el('p', {}, ...(d.deps.length === 0 ? ['none'] : d.deps.flatMap((x) => [link(x), ' ']))),
    el('h2', {}, 'Dependents'),
    el('p', {}, ...(d.dependents.length === 0 ? ['none'] : d.dependents.slice(0, 200).flatMap((x) => [link(x), ' ']))),
    el('h2', {}, 'Attempts'),
    el(
      'table',
      { class: 'attempts', id: 'attempts' },
      el('thead', {}, el('tr', {}, ...['#', 'state', 'executor', 'host', 'job id', 'started', 'took', 'exit', 'error'].map((h) => el('th', {}, h)))),
      el('tbody', {},
        ...d.attempts.map((a) =>
          el('tr', {},
            el('td', {}, a.attempt),
            el('td', {}, badge(a.state)),
            el('td', {}, a.executor ?? String(a.usage?.executor ?? '–')),
            el('td', {}, a.host ?? '–'),
            el('td', {}, a.jobId ?? '–'),
            el('td', {}, when(a.start)),
            el('td', {}, a.start !== undefined && a.end !== undefined ? duration(a.end - a.start) : '–'),
            el('td', { 'data-k': 'exit' }, a.usage?.signal ? `killed by ${String(a.usage.signal)}` : a.usage?.exitCode !== undefined && a.usage.exitCode !== null ? `exit ${String(a.usage.exitCode)}` : '–'),
            el('td', { class: 'error' }, a.error ?? ''),
          ),
        ),
      ),
    ),
    el('h2', {}, 'Usage'),
    el(
      'table',
      { class: 'usage', id: 'usage' },
      el('thead', {}, el('tr', {}, ...['#', 'CPU time', 'peak memory', 'wall time', 'GPU', 'other'].map((h) => el('th', {}, h)))),
      el('tbody', {}, ...d.attempts.map((a) => el('tr', { 'data-attempt': String(a.attempt) }, el('td', {}, a.attempt), ...usageCells(a.usage)))),
    ),
    logHead,
    logPre,
    el('h2', {}, 'Record'),
    el('pre', { id: 'record', class: 'record' }, d.record === null ? 'No record.' : JSON.stringify(d.record, null, 2)),
  );
  unlock?.addEventListener('click', async () => showBanner(await post(`${base}/unlock`)));
  const follow = async () => {
    if (!location.hash.endsWith(`/step/${index}`)) return;
    const log = await getJson<UiLog>(`${base}/log`).catch(() => null);
    if (log !== null) {
      fill(logHead, `Log (attempt ${log.attempt}${log.live ? ', following' : ''})`);
      logPre.textContent = log.lines.length === 0 ? '(no output)' : log.lines.join('\n');
      if (log.live) setTimeout(() => void follow(), 1000);
    }
  };
  await follow();
  openStream(runId, Number.MAX_SAFE_INTEGER, 0, {});
  api.view = 'step';
  api.ready = true;
}

// ---- the trace -------------------------------------------------------------------------
interface TraceRow {
  [k: string]: string | number | null;
}
async function traceView(runId: string): Promise<void> {
  fill(crumbs, ' / ', el('a', { href: `#/run/${encodeURIComponent(runId)}` }, runId), ' / trace');
  const rows = await getJson<TraceRow[]>(`api/runs/${encodeURIComponent(runId)}/trace`);
  const cols = ['name', 'state', 'attempts', 'duration_ms', 'cpu_ms', 'peak_memory_bytes', 'exit_code', 'key'];
  let sortBy = 'duration_ms';
  let desc = true;
  const body = el('tbody');
  const head = el('tr');
  const shownCap = 2000;
  const render = () => {
    const sorted = [...rows].sort((a, b) => {
      const x = a[sortBy];
      const y = b[sortBy];
      const c = x === null ? (y === null ? 0 : 1) : y === null ? -1 : typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
      return x === null || y === null ? c : desc ? -c : c;
    });
    fill(head, ...cols.map((c) => {
      const th = el('th', { 'data-col': c, class: 'sortable' }, c.replace(/_/g, ' '), c === sortBy ? (desc ? ' ▼' : ' ▲') : '');
      th.addEventListener('click', () => {
        desc = c === sortBy ? !desc : true;
        sortBy = c;
        render();
      });
      return th;
    }));
    fill(body, ...sorted.slice(0, shownCap).map((r) => el('tr', {}, ...cols.map((c) => el('td', {}, c === 'duration_ms' || c === 'cpu_ms' ? duration(r[c] as number | null) : c === 'peak_memory_bytes' ? bytes(r[c] as number | null) : r[c] === null ? '–' : String(r[c]))))));
  };
  fill(
    main,
    el('h1', {}, 'Trace'),
    el('p', {}, el('a', { href: `api/runs/${encodeURIComponent(runId)}/trace.csv`, id: 'csv', download: '' }, 'CSV'), ' · ', el('a', { href: `api/runs/${encodeURIComponent(runId)}/trace.tsv`, id: 'tsv', download: '' }, 'TSV'), rows.length > shownCap ? ` · showing the first ${shownCap} of ${rows.length} rows (the files have all)` : ''),
    el('table', { class: 'trace', id: 'trace' }, el('thead', {}, head), body),
  );
  render();
  api.view = 'trace';
  api.ready = true;
}

// ---- routing ---------------------------------------------------------------------------
async function route(): Promise<void> {
  api.ready = false;
  stream?.close();
  const parts = location.hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  try {
    if (parts[0] === 'run' && parts[1] !== undefined) {
      if (parts[2] === 'step' && parts[3] !== undefined) await stepView(parts[1], Number(parts[3]));
      else if (parts[2] === 'trace') await traceView(parts[1]);
      else await runView(parts[1]);
    } else await runsView();
  } catch (e) {
    fill(main, el('p', { class: 'error', id: 'load-error' }, (e as Error).message));
    // The store may come back: try again.
    setTimeout(() => void route(), 2000);
  }
}

async function start(): Promise<void> {
  info = await getJson<typeof info>('api/info').catch(() => info);
  fill(document.getElementById('prefix')!, info.prefix);
  // The token came in the URL once; the server set a cookie, so drop it from the address bar.
  if (new URLSearchParams(location.search).has('token')) history.replaceState(null, '', location.pathname + location.hash);
  window.addEventListener('hashchange', () => void route());
  await route();
}
void start();
