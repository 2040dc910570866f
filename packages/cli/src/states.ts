/**
 * Every state the CLI shows, with its label and colours, in one table: plan states (`plan`,
 * `graph`), run states (the live display, `report`), stored statuses (`status`) and attempt
 * ends (`report`, `status <step>`). The pictures (dot, Mermaid, HTML) and the terminal agree
 * because they all read this module. The runner's own state unions are the source of the
 * names; this module only adds how each looks.
 */
import type { PlanState, StepState as RunState, StatusToken } from '@cairn/runner';
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
  cached: { label: 'cached', color: GREEN, term: 'green' },
  run: { label: 'will run', color: BLUE, term: 'blue' },
  pruned: { label: 'pruned', color: GREY, term: 'dim' },
  drifted: { label: 'drifted', color: AMBER, term: 'yellow' },
  'failed-before': { label: 'failed before', color: RED, term: 'red' },
  running: { label: 'running', color: PURPLE, term: 'magenta' },
  unknown: { label: 'unknown', color: LIGHT, term: 'gray' },
};

/** Run states (the runner's `StepState`), in display order. */
export const RUN_STATES: Readonly<Record<RunState, StateLook & { readonly final: boolean }>> = {
  cached: { label: 'cached', color: GREEN, term: 'dim', final: true },
  succeeded: { label: 'succeeded', color: GREEN, term: 'green', final: true },
  running: { label: 'running', color: BLUE, term: 'blue', final: false },
  pending: { label: 'pending', color: LIGHT, term: 'gray', final: false },
  'waiting-lease': { label: 'waiting for a lease', color: PURPLE, term: 'magenta', final: false },
  retrying: { label: 'retrying', color: AMBER, term: 'yellow', final: false },
  failed: { label: 'failed', color: RED, term: 'red', final: true },
  'dep-failed': { label: 'dependency failed', color: '#e08a8a', term: 'red', final: true },
  cancelled: { label: 'cancelled', color: AMBER, term: 'yellow', final: true },
  skipped: { label: 'skipped', color: GREY, term: 'dim', final: true },
};

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

/** How attempts end (an `AttemptRecord.state`, or `running` for one still going). */
export const ATTEMPT_STATES: Readonly<Record<string, StateLook>> = {
  succeeded: { label: 'succeeded', color: GREEN, term: 'green' },
  failed: { label: 'failed', color: RED, term: 'red' },
  cancelled: { label: 'cancelled', color: AMBER, term: 'yellow' },
  timeout: { label: 'timed out', color: '#b8481f', term: 'red' },
  'lease-lost': { label: 'lease lost', color: PURPLE, term: 'magenta' },
  lost: { label: 'lost', color: '#6d4c41', term: 'red' },
  running: { label: 'running', color: BLUE, term: 'blue' },
};

/** Paints `text` in a state's terminal colour. */
export function paint(c: Colors, look: StateLook | undefined, text = look?.label ?? ''): string {
  return look === undefined ? text : c[look.term](text);
}
