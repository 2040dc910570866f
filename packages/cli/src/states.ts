/**
 * Every state the CLI shows, with its label and colours, in one table: plan states (`plan`,
 * `graph`), run states (the live display, `report`), stored statuses (`status`) and attempt
 * ends (`report`, `status <step>`). The pictures (dot, Mermaid, HTML) and the terminal agree
 * because they all read this module. The runner's state tables (`STEP_STATES`, `PLAN_LABELS`)
 * and `ATTEMPT_ENDS` are the source of the names, labels and which states are final; this module only adds colours.
 */
import { ATTEMPT_ENDS, PLAN_LABELS, STEP_STATES, type AttemptEnd, type PlanState, type StepState as RunState, type StatusToken } from '@cairn/runner';
import type { Colors } from './context.js';

/** A terminal colour (a picocolors function name). */
export type TermColor = 'green' | 'red' | 'yellow' | 'blue' | 'magenta' | 'dim' | 'gray';

/** How one state looks. */
export interface StateLook {
  /** Human label. */
  readonly label: string;
  /** Fill colour in pictures (`#rrggbb`). */
  readonly color: string;
  /** Terminal colour. */
  readonly term: TermColor;
}

/** What a plan (or the graph) says about a step: the runner's plan states plus two the CLI adds. */
export type StepState =
  | PlanState
  /** Running now (another runner holds its lease). */
  | 'running'
  /** No plan was made. */
  | 'unknown';

const GREEN = '#3fa34d';
const BLUE = '#2f6fde';
const GREY = '#9aa0a6';
const AMBER = '#e3a21a';
const RED = '#d93f3f';
const PURPLE = '#8e44ad';
const LIGHT = '#c7ccd1';

/** Plan states, in legend order. */
export const PLAN_STATES: Readonly<Record<StepState, StateLook>> = {
  cached: { label: PLAN_LABELS.cached, color: GREEN, term: 'green' },
  run: { label: PLAN_LABELS.run, color: BLUE, term: 'blue' },
  'not-examined': { label: PLAN_LABELS['not-examined'], color: GREY, term: 'dim' },
  drifted: { label: PLAN_LABELS.drifted, color: AMBER, term: 'yellow' },
  'failed-before': { label: PLAN_LABELS['failed-before'], color: RED, term: 'red' },
  running: { label: 'running', color: PURPLE, term: 'magenta' },
  unknown: { label: 'unknown', color: LIGHT, term: 'gray' },
};

/** How each run state looks (the runner's `StepState`), in display order. */
const RUN_LOOKS: Readonly<Record<RunState, Omit<StateLook, 'label'>>> = {
  cached: { color: GREEN, term: 'dim' },
  succeeded: { color: GREEN, term: 'green' },
  running: { color: BLUE, term: 'blue' },
  pending: { color: LIGHT, term: 'gray' },
  'waiting-lease': { color: PURPLE, term: 'magenta' },
  retrying: { color: AMBER, term: 'yellow' },
  failed: { color: RED, term: 'red' },
  'dep-failed': { color: '#e08a8a', term: 'red' },
  cancelled: { color: AMBER, term: 'yellow' },
  skipped: { color: GREY, term: 'dim' },
};

/** Run states (the runner's `StepState`), in display order: the runner's label and finality, the CLI's colours. */
export const RUN_STATES: Readonly<Record<RunState, StateLook & { readonly final: boolean }>> = Object.fromEntries(
  (Object.keys(RUN_LOOKS) as RunState[]).map((s) => [s, { label: STEP_STATES[s].label, final: STEP_STATES[s].final, ...RUN_LOOKS[s] }]),
) as Record<RunState, StateLook & { readonly final: boolean }>;

/** What `cairn status` shows for a stored step: the recorded token, or what its lease says. */
export type StoredStateName = StatusToken | 'STALE_LEASE' | 'UNKNOWN';

/** Stored statuses. */
export const STORED_STATES: Readonly<Record<StoredStateName, StateLook>> = {
  SUCCESS: { label: 'SUCCESS', color: GREEN, term: 'green' },
  FAILED: { label: 'FAILED', color: RED, term: 'red' },
  DEP_FAILED: { label: 'DEP_FAILED', color: '#e08a8a', term: 'red' },
  CANCELLED: { label: 'CANCELLED', color: AMBER, term: 'yellow' },
  RUNNING: { label: 'RUNNING', color: BLUE, term: 'blue' },
  STALE_LEASE: { label: 'STALE_LEASE', color: AMBER, term: 'yellow' },
  UNKNOWN: { label: 'UNKNOWN', color: LIGHT, term: 'yellow' },
};

/** How each attempt end looks (the runner's `AttemptEnd`), in legend order. */
const ATTEMPT_LOOKS: Readonly<Record<AttemptEnd, Omit<StateLook, 'label'>>> = {
  succeeded: { color: GREEN, term: 'green' },
  failed: { color: RED, term: 'red' },
  cancelled: { color: AMBER, term: 'yellow' },
  timeout: { color: '#b8481f', term: 'red' },
  'lease-lost': { color: PURPLE, term: 'magenta' },
  lost: { color: '#6d4c41', term: 'red' },
  preempted: { color: '#c77c02', term: 'yellow' },
};

/** How attempts end (an `AttemptRecord.state`, or `running` for one still going): the runner's ends and labels, the CLI's colours. */
export const ATTEMPT_STATES: Readonly<Record<AttemptEnd | 'running', StateLook>> = {
  ...(Object.fromEntries((Object.keys(ATTEMPT_LOOKS) as AttemptEnd[]).map((s) => [s, { label: ATTEMPT_ENDS[s].label, ...ATTEMPT_LOOKS[s] }])) as Record<AttemptEnd, StateLook>),
  running: { label: 'running', color: BLUE, term: 'blue' },
};

/** Paints `text` in a state's terminal colour. */
export function paint(c: Colors, look: StateLook | undefined, text = look?.label ?? ''): string {
  return look === undefined ? text : c[look.term](text);
}
