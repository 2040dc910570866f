/**
 * Writes a store as Marin writes it, from Marin's documented formats (see /work/shared/MARIN.md,
 * not its code): `{prefix}/{name}/{version}/`, a one-token `.executor_status` (or the legacy
 * JSON-lines event log), an `.artifact.json` dumped by pydantic with `indent=2` (snake_case
 * fields, md5[:8] fingerprints over `canonical_json` payloads — Python's `json.dumps(sort_keys=True)`
 * with its default `", "` and `": "` separators), and `.executor_status.lock` as
 * `{"worker_id", "timestamp"}` with a float epoch in seconds.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync, utimesSync } from 'node:fs';
import { join } from 'node:path';

/** Python's `json.dumps(value, sort_keys=True)`: `", "` and `": "`, keys sorted, non-ASCII escaped. */
export function pythonJson(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  if (typeof value === 'number' || typeof value === 'boolean') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(pythonJson).join(', ')}]`;
  const o = value as Record<string, unknown>;
  return `{${Object.keys(o).sort().map((k) => `${pythonJson(k)}: ${pythonJson(o[k])}`).join(', ')}}`;
}

/** One Marin lazy artifact. */
export interface MarinArtifact {
  readonly name: string;
  readonly version: string;
  /** What `build_config` returned under `StepContext.for_fingerprint` (deps as "name@version", OUT as "<output_path>", runtime args as "<key>"). */
  readonly fingerprintConfig: Readonly<Record<string, unknown>>;
  /** The materialised config the step ran with. */
  readonly config: Readonly<Record<string, unknown>>;
  readonly deps?: readonly string[];
  readonly result?: unknown;
  /** Output files (relative path → content). */
  readonly files?: Readonly<Record<string, string>>;
  /** The status file as written: a token, or the legacy JSON-lines log. */
  readonly status?: string;
}

/** Writes `a` under `prefix` as Marin would; returns its output path. */
export function writeMarinArtifact(prefix: string, a: MarinArtifact): string {
  const out = join(prefix, a.name, a.version);
  mkdirSync(out, { recursive: true });
  for (const [f, text] of Object.entries(a.files ?? {})) writeFileSync(join(out, f), text);
  const payload = pythonJson(a.fingerprintConfig);
  const record = {
    name: a.name,
    version: a.version,
    fingerprint: createHash('md5').update(payload).digest('hex').slice(0, 8),
    result_type: 'marin.execution.artifact.Artifact',
    output_path: out,
    deps: a.deps ?? [],
    dep_paths: [],
    config: a.config,
    source: null,
    result: a.result ?? null,
    fingerprint_payload: payload,
    provenance: { git_commit: '0e04286', dirty: false, user: 'marin', host: 'tpu-vm-3', argv: ['python', 'pipeline.py'], created_at: '2026-11-30T10:00:00Z' },
  };
  writeFileSync(join(out, '.artifact.json'), JSON.stringify(record, null, 2));
  writeFileSync(join(out, '.executor_status'), a.status ?? 'SUCCESS');
  return out;
}

/** Marin's lock on `outputPath`, taken `ageS` seconds ago by `workerId`. */
export function writeMarinLock(outputPath: string, workerId: string, ageS = 0): void {
  mkdirSync(outputPath, { recursive: true });
  const at = Date.now() / 1000 - ageS;
  const file = join(outputPath, '.executor_status.lock');
  writeFileSync(file, JSON.stringify({ worker_id: workerId, timestamp: at }));
  // Marin rewrites its lock on each refresh: the file's time is its last refresh too.
  utimesSync(file, at, at);
}
