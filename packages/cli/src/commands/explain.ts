/**
 * `cairn explain <step> [pipeline]`: why a step is not cached. Its hash inputs now (from the
 * pipeline) next to the recorded ones (from the store), field by field: identity, version,
 * config fingerprint with a per-field config diff (core's `describeDrift`), dependencies and
 * their states, and the recorded status. With `--config`: the exact config the step will receive
 * (explain-config.ts).
 */
import { describeDrift, type StepSpec } from '@cairn/core';
import type { ArtifactRecord } from '@cairn/runner';
import { loadConfig } from '../config.js';
import { out, type CliContext } from '../context.js';
import { loadPipeline, stepsMatching } from '../pipeline.js';
import type { StoredStep } from '../store-scan.js';
import { openStore } from '../store-view.js';
import { makePlan, type CliPlanStep } from '../plan.js';
import { paint, PLAN_STATES, type StepState, STORED_STATES, type StoredStateName } from '../states.js';
import { formatTable } from '../table.js';
import { explainConfig } from './explain-config.js';
import { resolveStoredStep } from './logs.js';

/** Options of `cairn explain`. */
export interface ExplainCommandOptions {
  /** Store prefix. */
  readonly prefix?: string;
  /** Print JSON. */
  readonly json?: boolean;
  /** Print the exact config each step will receive instead (needs the pipeline). */
  readonly config?: boolean;
}

/** One compared field. */
export interface ExplainField {
  readonly field: string;
  readonly recorded: string;
  readonly current: string;
  readonly same: boolean;
}

/** One dependency, now and as recorded. */
export interface ExplainDep {
  /** `name@version` (lazy) or `nameWithHash`. */
  readonly ident: string;
  /** In the current pipeline. */
  readonly current: boolean;
  /** In the record. */
  readonly recorded: boolean;
  /** The dependency's stored status (current deps only). */
  readonly status: string;
}

/** What `cairn explain` found. */
export interface Explanation {
  readonly step: string;
  readonly nameWithHash: string | null;
  readonly path: string;
  /** What a run would do (the plan's state); null without a pipeline. */
  readonly state: StepState | null;
  /** Why the step is not served from the store (empty: it is cached). */
  readonly reasons: readonly string[];
  readonly fields: readonly ExplainField[];
  /** describeDrift lines: recorded config → current config. */
  readonly configDiff: readonly string[];
  readonly deps: readonly ExplainDep[];
  /** The path of the record compared with (may differ from `path` after a version bump). */
  readonly comparedWith: string | null;
}

function stringOrDash(v: unknown): string {
  return v === undefined || v === null ? '-' : typeof v === 'string' ? v : JSON.stringify(v);
}

function statusOf(step: StoredStep | undefined): string {
  if (step === undefined) return 'not built';
  if (step.lease !== null) return 'RUNNING';
  return step.status ?? 'incomplete';
}

/**
 * Compares a spec with the store. Whether it is cached and why comes from the runner's plan
 * (`planned`: the same classification `plan`, `run` and `graph` use); the rest is detail: its
 * hash inputs next to the record at its path, or the newest record of the same name.
 */
export function explainSpec(spec: StepSpec, prefix: string, stored: readonly StoredStep[], planned: Pick<CliPlanStep, 'state' | 'reason'>): Explanation {
  const path = spec.outputPath(prefix);
  const byPath = new Map(stored.map((s) => [s.path, s]));
  const here = byPath.get(path);
  // Nothing here (a config change or a version bump gave a new path): the newest record of the same name.
  let compared: StoredStep | undefined = here?.record ? here : undefined;
  if (compared === undefined) {
    const same = stored.filter((s) => s.record?.name === spec.name);
    same.sort((a, b) => (b.record?.timings?.end ?? 0) - (a.record?.timings?.end ?? 0));
    compared = same[0];
  }
  const r: ArtifactRecord | undefined = compared?.record ?? undefined;
  const cached = planned.state === 'cached' || planned.state === 'not-examined';
  const reasons = cached ? [] : [`${PLAN_STATES[planned.state].label}: ${planned.reason}`];
  const fields: ExplainField[] = [];
  const add = (field: string, recorded: unknown, current: unknown) => {
    const a = stringOrDash(recorded);
    const b = stringOrDash(current);
    fields.push({ field, recorded: a, current: b, same: a === b });
  };
  add('nameWithHash', r?.nameWithHash, spec.nameWithHash);
  add('output', compared?.path, path);
  add('version', r?.version, spec.version);
  add('fingerprint', r?.fingerprint, spec.fingerprint);
  add('deps', r?.deps?.join(', '), spec.deps.map((d) => d.ident).join(', '));
  const configDiff = r?.fingerprintPayload !== undefined && spec.fingerprintPayload !== undefined ? describeDrift(r.fingerprintPayload, spec.fingerprintPayload, { maxLines: 50 }) : [];
  const recordedDeps = new Set(r?.deps ?? []);
  const deps: ExplainDep[] = [];
  for (const d of spec.deps) deps.push({ ident: d.ident, current: true, recorded: recordedDeps.has(d.ident), status: statusOf(byPath.get(d.outputPath(prefix))) });
  for (const ident of recordedDeps) if (!spec.deps.some((d) => d.ident === ident)) deps.push({ ident, current: false, recorded: true, status: '-' });
  return { step: spec.name, nameWithHash: spec.nameWithHash, path, state: planned.state, reasons, fields, configDiff, deps, comparedWith: compared?.path ?? null };
}

/** Explains one stored step without a pipeline: its status, error and recorded hash inputs. */
function explainStored(s: StoredStep): Explanation {
  const r = s.record;
  const status = statusOf(s);
  const reasons: string[] = [];
  if (status !== 'SUCCESS') reasons.push(`the stored status is ${status}${r?.error ? `: ${r.error.message.split('\n')[0]}` : ''}.`);
  const fields: ExplainField[] = [
    { field: 'nameWithHash', recorded: stringOrDash(r?.nameWithHash), current: '(pass the pipeline)', same: true },
    { field: 'version', recorded: stringOrDash(r?.version), current: '', same: true },
    { field: 'fingerprint', recorded: stringOrDash(r?.fingerprint), current: '', same: true },
    { field: 'config', recorded: stringOrDash(r?.fingerprintPayload), current: '', same: true },
    { field: 'deps', recorded: stringOrDash(r?.deps?.join(', ')), current: '', same: true },
  ];
  return { step: r?.name ?? s.rel, nameWithHash: r?.nameWithHash ?? null, path: s.path, state: null, reasons, fields, configDiff: [], deps: [], comparedWith: s.path };
}

/** Prints why a step is (not) cached. */
export async function explainCommand(ctx: CliContext, selector: string, file: string | undefined, options: ExplainCommandOptions): Promise<number> {
  const config = await loadConfig({ config: ctx.configFile, prefix: options.prefix }, ctx.env, ctx.cwd);
  if (options.config === true) return explainConfig(ctx, config, selector, file, options.json === true);
  const view = await openStore(config);
  const prefix = view.prefix;
  let explanations: Explanation[];
  if (file !== undefined) {
    const pipeline = await loadPipeline(file, ctx.cwd, config.layout);
    const specs = stepsMatching(pipeline, selector);
    // The plan of these steps as targets: each is examined, as `cairn run pipeline.ts STEP` would.
    const plan = await makePlan(pipeline, config, specs);
    const byHash = new Map(plan.steps.map((p) => [p.nameWithHash, p]));
    const stored = await view.scan().catch(() => [] as StoredStep[]);
    explanations = specs.map((s) => explainSpec(s, prefix, stored, byHash.get(s.nameWithHash) as CliPlanStep));
  } else {
    explanations = [explainStored(await resolveStoredStep(ctx, view, selector, 'cairn explain', config))];
  }
  if (options.json) {
    out(ctx, JSON.stringify(explanations.length === 1 ? explanations[0] : explanations, null, 2));
    return 0;
  }
  const c = ctx.colors;
  for (const e of explanations) {
    out(ctx, `${c.bold(e.step)} ${c.dim(e.nameWithHash ?? '')}  ${c.dim(e.path)}`);
    if (e.reasons.length === 0 && e.state !== null) out(ctx, c.green('  cached: the stored output is current; a run will not rebuild it.'));
    for (const reason of e.reasons) out(ctx, `  ${c.yellow('•')} ${reason}`);
    out(ctx);
    const table = formatTable(
      ['field', 'recorded', file !== undefined ? 'now' : ''],
      e.fields.map((f) => [f.field, f.recorded, f.same ? f.current : c.yellow(f.current)]),
    );
    out(ctx, table.split('\n').map((l) => `  ${l}`).join('\n'));
    if (e.configDiff.length > 0) {
      out(ctx);
      out(ctx, '  config (recorded -> now):');
      for (const line of e.configDiff) out(ctx, `    ${line}`);
    }
    if (e.deps.length > 0) {
      out(ctx);
      out(ctx, '  dependencies:');
      for (const d of e.deps) {
        const where = d.current && d.recorded ? '' : d.current ? c.yellow(' (new)') : c.yellow(' (removed)');
        out(ctx, `    ${d.ident}${where} ${paint(c, STORED_STATES[d.status as StoredStateName] ?? { label: d.status, color: '', term: 'dim' }, d.status)}`);
      }
    }
    out(ctx);
  }
  return 0;
}
