/**
 * A step's artifact record, built when it is written (or, in a store that keeps records in
 * memory, when it is first read: most records of an in-memory run are never read).
 */
import { captureProvenance, type Provenance, resolveInputs, type StepSpec } from '@cairn/core';
import type { JobHandle } from '../executor/contract.js';
import { thisHost } from '../store/leases.js';
import { type ArtifactRecord, type AttemptRecord, type DeferredRecord, errorData } from '../store/records.js';
import type { StatusToken } from '../store/status.js';
import { keyOf, type Node, type RunStamp } from './node.js';

/** The `info` of a job handle made by the runner for an in-process attempt (it has none). */
const NO_INFO: Readonly<Record<string, unknown>> = Object.freeze({});

/**
 * What one record is made of, kept until the record is needed. Everything it reads is fixed once
 * the step is committed: the node's spec, path, key and executor, and the values passed here.
 */
export class StepRecord implements DeferredRecord {
  constructor(
    readonly node: Node,
    readonly status: StatusToken,
    /** Every attempt of this run. */
    readonly attempts: readonly AttemptRecord[],
    /** The job handle of the last attempt. */
    readonly handle: JobHandle | undefined,
    readonly error: unknown,
    /** The recorded (JSON) value. */
    readonly value: unknown,
    readonly start: number,
    readonly end: number,
  ) {}

  build(): ArtifactRecord {
    return buildRecord(this.node, this.status, this.attempts, this.handle, this.error, this.value, this.start, this.end);
  }
}

/**
 * `Node.build`: the record of a step whose first attempt succeeded, from the node alone (its
 * `result`, `executor`, `t0`, `t1`): a MemoryStore keeps the node as the step's record instead of
 * one more object per step (the "scheduler overhead" bench row).
 */
export function buildNodeRecord(this: Node): ArtifactRecord {
  const { epoch } = this.stamp;
  const start = epoch + this.t0;
  const end = epoch + this.t1;
  const jobId = `${keyOf(this)}.1`;
  const attempts: AttemptRecord[] = [{ attempt: 1, start, end, state: 'succeeded', executor: this.executor, jobId, host: thisHost() }];
  return buildRecord(this, 'SUCCESS', attempts, { jobId, executor: this.executor, info: NO_INFO }, undefined, this.result, start, end);
}

/** Provenance captured once per run (git facts, user, argv, time), for steps lowered without one. */
const provenanceOfRun = new WeakMap<RunStamp, Provenance>();
function runProvenance(stamp: RunStamp): Provenance {
  let p = provenanceOfRun.get(stamp);
  if (p === undefined) provenanceOfRun.set(stamp, (p = captureProvenance()));
  return p;
}

/** The artifact record of `node`. */
export function buildRecord(node: Node, status: StatusToken, attempts: readonly AttemptRecord[], handle: JobHandle | undefined, error: unknown, value: unknown, start: number, end: number): ArtifactRecord {
  const spec = node.spec;
  const deps = spec.deps;
  // From the specs (a deferred record may be built after its run): a dependency's path and
  // identity are its own, whichever spec of the same path the run kept as the step.
  const prefix = node.stamp.prefix;
  const depPaths = new Array<string>(deps.length);
  const depIdents = new Array<string>(deps.length);
  const depIdentities = new Array<string>(deps.length);
  for (let i = 0; i < deps.length; i++) {
    const d = deps[i] as StepSpec;
    depPaths[i] = d.adoptedSource ?? d.outputPath(prefix);
    const id = d.nameWithHash;
    depIdentities[i] = id;
    depIdents[i] = d.version !== undefined ? d.ident : id;
  }
  const runtime = spec.runtime;
  let config: unknown = spec.hashAttrs;
  if (spec.kind === 'apply') {
    // Keyed by identities, a new property name per step: a null-prototype object is a dictionary
    // from the start, where a literal made V8 build a hidden class for each (bench row files-10k).
    const byKey = Object.create(null) as Record<string, string>;
    for (let i = 0; i < deps.length; i++) byKey[(deps[i] as StepSpec).nameWithHash] = depPaths[i] as string;
    // OUT is the final path here: the record says where the output is, not where it was staged.
    const resolved = jsonSafe(resolveInputs(spec, node.path, byKey));
    config = resolved === NOT_JSON ? null : resolved;
    // The config is what bears identity; runtime arguments are recorded beside it.
    if (runtime !== undefined && config !== null) for (const k of Object.keys(runtime)) delete (config as Record<string, unknown>)[k];
  }
  // Built field by field (no spreads), in the order of the record format.
  const record: Record<string, unknown> = { cairn: 1, name: spec.name, nameWithHash: keyOf(node) };
  if (spec.version !== undefined) record.version = spec.version;
  if (spec.fingerprint !== undefined) record.fingerprint = spec.fingerprint;
  if (spec.fingerprintPayload !== undefined) record.fingerprintPayload = spec.fingerprintPayload;
  record.outputPath = node.path;
  record.config = config;
  record.deps = depIdents;
  record.depPaths = depPaths;
  record.depIdentities = depIdentities;
  if (runtime !== undefined) record.runtime = runtime;
  record.status = status;
  if (value !== undefined) record.result = value;
  if (spec.artifact !== undefined) record.artifact = spec.artifact.name;
  if (spec.adoptedSource !== undefined) record.source = spec.adoptedSource;
  if (error !== undefined) record.error = errorData(error);
  // Lazy steps carry the provenance of their lowering; a plain StepSpec gets the run's.
  record.provenance = spec.provenance ?? runProvenance(node.stamp);
  record.attempts = attempts;
  record.timings = { start, end, durationMs: end - start };
  record.executor = node.executor;
  if (handle !== undefined) record.job = handle;
  record.runId = node.stamp.runId;
  return record as unknown as ArtifactRecord;
}

/** What {@link jsonSafe} returns for a value that has no JSON form. */
export const NOT_JSON: unique symbol = Symbol('not JSON');

/** The JSON form of `value` (undefined stays undefined), or {@link NOT_JSON}. No object is made for the common values. */
export function jsonSafe(value: unknown): unknown {
  if (value === undefined || value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  // A finite number is its own JSON form, except -0 (which JSON turns into 0).
  if (typeof value === 'number' && Number.isFinite(value) && !Object.is(value, -0)) return value;
  try {
    const text = JSON.stringify(value);
    return text === undefined ? NOT_JSON : (JSON.parse(text) as unknown);
  } catch {
    return NOT_JSON;
  }
}

/**
 * `value` with every mention of `from` (an attempt's staged directory) in its strings replaced by
 * `to` (the step's output path): a step that returns a path inside its own output records where
 * that path is after the commit. The same object when nothing changes.
 */
export function rebase(value: unknown, from: string, to: string): unknown {
  if (typeof value === 'string') return rebaseText(value, from, to);
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const v = rebase(value[i], from, to);
      if (v !== value[i]) (out ??= value.slice())[i] = v;
    }
    return out ?? value;
  }
  let out: Record<string, unknown> | undefined;
  for (const k of Object.keys(value)) {
    const old = (value as Record<string, unknown>)[k];
    const v = rebase(old, from, to);
    if (v !== old) (out ??= { ...(value as Record<string, unknown>) })[k] = v;
  }
  return out ?? value;
}

/** `text` with `from` replaced by `to` wherever it is a whole path (not followed by more of a name). */
function rebaseText(text: string, from: string, to: string): string {
  let at = text.indexOf(from);
  if (at < 0) return text;
  let out = '';
  let done = 0;
  while (at >= 0) {
    const next = text.charCodeAt(at + from.length);
    // A name character after it (a letter, digit, '.', '_', '-') means another path: `…-1` in `…-10`.
    const whole = Number.isNaN(next) || !/[\w.-]/.test(String.fromCharCode(next));
    if (whole) {
      out += text.slice(done, at) + to;
      done = at + from.length;
    }
    at = text.indexOf(from, at + from.length);
  }
  return out + text.slice(done);
}
