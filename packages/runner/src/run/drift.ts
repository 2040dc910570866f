/**
 * Drift: a built step at a fixed location (a pin, the `'versioned'` layout, an
 * `overrideOutputPath`) whose record says it was built from another recipe than the step has now.
 * Pure, and the one place this is decided and worded: the run, the dry run (`plan`) and
 * `explain` ask here.
 *
 * A content-addressed step cannot drift: its identity is in its path, and a record of another
 * identity there is unusable (classify.ts). At a fixed path the record's identity (`nameWithHash`,
 * Merkle over the step's config and its dependencies' identities) is compared with the step's:
 * one record read finds a change of the step's own config and of any config upstream of it, so
 * no ancestor is read to find drift. The record's fingerprint payload and dependency identities
 * then say what changed.
 */
import { describeDrift, type StepSpec } from '@cairn/core';
import type { ArtifactRecord } from '../store/records.js';
import { comparablePayloads, isCairnRecord, marinPayload, sameData } from './marin-record.js';

/** How a built step's recorded recipe differs from its spec. */
export interface Drift {
  /** The recorded fingerprint and identity. */
  readonly recorded: { readonly fingerprint: string | undefined; readonly nameWithHash: string | undefined };
  /** Field-level diff of the step's own config (`smoothing: 0.5 -> 5`); empty when it is the same. */
  readonly config: readonly string[];
  /** Dependencies whose identity changed since the build (`model@v1`), when the record says. */
  readonly deps: readonly string[];
  /** True when the own config is the same and the record cannot say which dependency changed (a record from before Cairn kept dependency identities). */
  readonly upstreamUnknown: boolean;
}

/**
 * The drift of `spec` from `record`, the record of its built output; undefined when there is none
 * or it cannot be told (a content-addressed step, a step without a config fingerprint, a Marin
 * record without a payload).
 */
export function driftOf(spec: StepSpec, record: ArtifactRecord | null | undefined): Drift | undefined {
  if (!record || !spec.fixedPath || spec.fingerprint === undefined) return undefined;
  const payload = spec.fingerprintPayload ?? '';
  if (!isCairnRecord(record)) {
    // Marin's fingerprints use another hash: its payload is compared instead.
    const theirs = marinPayload(record);
    if (theirs === undefined) return undefined;
    const both = comparablePayloads(theirs, payload, Object.keys(spec.runtime ?? {}));
    if (both === undefined) {
      if (theirs === payload) return undefined;
      return { recorded: { fingerprint: record.fingerprint, nameWithHash: undefined }, config: describeDrift(theirs, payload), deps: [], upstreamUnknown: false };
    }
    if (sameData(both.marin, both.cairn)) return undefined;
    const config = describeDrift(JSON.stringify(both.marin), JSON.stringify(both.cairn));
    return { recorded: { fingerprint: record.fingerprint, nameWithHash: undefined }, config, deps: [], upstreamUnknown: false };
  }
  if (record.nameWithHash === spec.nameWithHash) return undefined;
  const config = record.fingerprint === spec.fingerprint ? [] : describeDrift(record.fingerprintPayload ?? '', payload);
  const recordedDeps = record.depIdentities;
  const deps: string[] = [];
  if (Array.isArray(recordedDeps)) {
    const had = new Set(recordedDeps);
    for (const d of spec.deps) if (!had.has(d.nameWithHash)) deps.push(d.ident);
  }
  return {
    recorded: { fingerprint: record.fingerprint, nameWithHash: record.nameWithHash },
    config,
    deps,
    upstreamUnknown: config.length === 0 && deps.length === 0 && !Array.isArray(recordedDeps),
  };
}

/** What changed, one item per line (`smoothing: 0.5 -> 5`, `dependency model@v1 changed`). */
export function driftLines(d: Drift): string[] {
  const lines = [...d.config];
  for (const dep of d.deps) lines.push(`dependency ${dep} changed`);
  if (d.upstreamUnknown) lines.push('a dependency changed (its record predates per-dependency identities)');
  if (lines.length === 0) lines.push(`its identity changed (recorded ${String(d.recorded.nameWithHash)})`);
  return lines;
}

/** Where a fixed-path step's location comes from, for messages. */
export function fixedBy(spec: StepSpec): string {
  if (spec.kind !== 'apply') return 'its overrideOutputPath';
  const at = spec.overrideOutputPath as string;
  return at === `${spec.name}/${spec.version as string}` ? "the 'versioned' layout" : `its pin ${JSON.stringify(at)}`;
}
