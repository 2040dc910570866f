/**
 * What a run does with a drifted step (drift.ts finds it): fail it with the diff and the fixes
 * (the default), serve it because the caller accepted it (`acceptDrift`), or serve it with a
 * warning (`onDrift: 'warn'`, Marin's behaviour). A pinned fingerprint that the recorded one
 * does not match fails whatever was accepted. Pure: the run and the dry run word it alike.
 */
import { CairnError } from '@cairn/core';
import { type Drift, driftLines, fixedBy } from './drift.js';
import type { Node } from './node.js';
import { type Selection, selects } from './selection.js';

/** How a drifted step is handled. */
export type DriftOutcome =
  /** Fails with `CAIRN_DRIFT` (or `CAIRN_FINGERPRINT_MISMATCH` against a pinned fingerprint). */
  | 'error'
  /** Served: the caller accepted it. */
  | 'accepted'
  /** Served with a warning (`onDrift: 'warn'`). */
  | 'warned';

/** The outcome for one drifted step, its message, and the error when it fails. */
export interface DriftVerdict {
  readonly outcome: DriftOutcome;
  readonly message: string;
  readonly error?: CairnError;
}

/** What the verdict depends on (a run's config). */
export interface DriftPolicy {
  readonly acceptDrift: Selection | undefined;
  readonly onDrift: 'error' | 'warn';
}

/** The verdict for `node`, a built step flagged drifted (its `ext.drift` set). */
export function driftVerdict(node: Node, policy: DriftPolicy): DriftVerdict {
  const spec = node.spec;
  const drift = node.ext?.drift as Drift;
  const who = spec.version !== undefined ? `${spec.name}@${spec.version}` : spec.name;
  const lines = driftLines(drift);
  const detail = `\n  ${lines.join('\n  ')}`;
  const recorded = drift.recorded.fingerprint;
  if (spec.expectedFingerprint !== undefined && recorded !== spec.expectedFingerprint) {
    const message = `Step "${who}": the output at ${node.path} was built with fingerprint ${String(recorded)}, but ${spec.expectedFingerprint} is pinned.${detail}\nBump the version, or delete the output to rebuild it.`;
    return { outcome: 'error', message, error: new CairnError('CAIRN_FINGERPRINT_MISMATCH', message, { step: spec.name }) };
  }
  if (policy.acceptDrift !== undefined && selects(policy.acceptDrift, node)) {
    return { outcome: 'accepted', message: `${who}: serving the output at ${node.path}, built from another recipe than now (drift accepted):${detail}` };
  }
  if (policy.onDrift === 'warn') {
    return { outcome: 'warned', message: `${who}: recipe drift — recorded fingerprint ${String(recorded)}, now ${String(spec.fingerprint)}; serving the cached output (onDrift: 'warn'). Bump the version to rebuild.${detail}` };
  }
  const message =
    `Step "${who}" lives at a fixed path (${fixedBy(spec)}), and its output at ${node.path} was built from another recipe than it has now:${detail}\n` +
    `It is not served. Either bump the version of "${spec.name}" (a new output beside the old one), rebuild it in place (cairn run --rebuild ${spec.name}; rebuild: ['${spec.name}']), ` +
    `or serve the recorded output as it is (cairn run --accept-drift ${spec.name}; acceptDrift: ['${spec.name}']).`;
  return { outcome: 'error', message, error: new CairnError('CAIRN_DRIFT', message, { step: spec.name }) };
}
