/**
 * What a step's stored state means for a run: built, or not and why. Pure, and the one place
 * this is decided: the run, the dry run (`plan`), the re-check under a lease and the wait on
 * another runner's lease all ask here.
 */
import type { StepSpec } from '@cairn/core';
import type { RecordHead } from '../store/record-head.js';
import type { StoredState } from '../store/store.js';

/** Why a step is not built, or that it is. */
export type Verdict =
  /** Recorded SUCCESS with a record that is this step's. */
  | 'built'
  /** A mutable (`dev`) version: always rebuilt. */
  | 'mutable'
  /** Nothing recorded. */
  | 'absent'
  /** A status or record that exists but cannot be used (corrupt, half-written, another step's record). */
  | 'unusable'
  /** Recorded FAILED or DEP_FAILED. */
  | 'failed-before'
  /** Another status (CANCELLED, Marin's RUNNING). */
  | 'not-built';

/** The reason of an `absent` verdict. */
export const NOT_BUILT = 'not built';

/** A verdict and the words for it. */
export interface Classification {
  readonly verdict: Verdict;
  /** Why, for people (plan, explain). */
  readonly reason: string;
  /** For `unusable`: what is wrong with the stored files (a run warns with it). */
  readonly problem?: string;
}

/** Whether `record` says it is the record of `spec` at `path` (a store moved to another prefix stays valid). */
function problemOf(spec: StepSpec, path: string, st: StoredState): string | undefined {
  const record: RecordHead | null | undefined = st.record ?? st.head;
  if (record === null || record === undefined) return 'it recorded SUCCESS but its record is missing or unreadable';
  // Records not written by Cairn (Marin's) carry other fields; they are trusted as they are.
  if ((record as { cairn?: unknown }).cairn === undefined) return undefined;
  // A lazy step at a fixed location (a pin, the 'versioned' layout) is that name@version there,
  // whatever its recipe: a changed recipe is drift (drift.ts), not another step. Anywhere else
  // the record must be of this very identity.
  const same = spec.version !== undefined && spec.fixedPath ? record.name === spec.name && record.version === spec.version : record.nameWithHash === spec.nameWithHash;
  if (!same) {
    const theirs = record.version !== undefined ? `${record.name}@${record.version}` : record.nameWithHash;
    return `its record belongs to another step (${theirs})`;
  }
  const at = record.outputPath;
  if (typeof at !== 'string' || (at !== path && !at.endsWith(path.slice(path.lastIndexOf('/'))))) return `its record names another output path (${String(at)})`;
  return undefined;
}

/** The classifications every step of a warm (or a cold) run gets: one object each, not one per step. */
const BUILT: Classification = Object.freeze({ verdict: 'built', reason: 'recorded SUCCESS' });
const ABSENT: Classification = Object.freeze({ verdict: 'absent', reason: NOT_BUILT });

/** Classifies a step's stored state (`st` read with its record). */
export function classify(spec: StepSpec, path: string, st: StoredState | undefined): Classification {
  if (spec.mutable) return { verdict: 'mutable', reason: `mutable version "${spec.version}" is always rebuilt` };
  if (st === undefined || (st.status === null && st.problem === undefined)) return ABSENT;
  if (st.problem !== undefined) return { verdict: 'unusable', reason: `${st.problem}; treated as not built`, problem: st.problem };
  if (st.status === 'SUCCESS') {
    const problem = problemOf(spec, path, st);
    return problem === undefined ? BUILT : { verdict: 'unusable', reason: `${problem}; treated as not built`, problem };
  }
  if (st.status === 'FAILED' || st.status === 'DEP_FAILED') return { verdict: 'failed-before', reason: `recorded ${st.status}` };
  return { verdict: 'not-built', reason: `recorded ${st.status}` };
}

/** True when `st` (read with its record) means `spec` is built at `path`, whatever its version says. */
export function usable(spec: StepSpec, path: string, st: StoredState): boolean {
  return st.status === 'SUCCESS' && st.problem === undefined && problemOf(spec, path, st) === undefined;
}
