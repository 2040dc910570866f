/**
 * Records Marin wrote (`.artifact.json` without Cairn's `cairn` field): their fingerprints are
 * md5 over Marin's payload, so they are never compared with Cairn's; the payloads are. Marin's
 * payload is `canonical_json(build_config(StepContext.for_fingerprint(…)))`: a dependency is
 * `"name@version"`, the output path `"<output_path>"`, a runtime argument `"<key>"`. Cairn's
 * fingerprint payload writes `"<dep:name@version>"` and `"<OUT>"` and leaves runtime arguments
 * out. Both are mapped to one form and compared as data (key order and spacing do not matter).
 */
import type { ArtifactRecord } from '../store/records.js';

/** True for a record Cairn wrote. */
export function isCairnRecord(record: ArtifactRecord): boolean {
  return (record as { cairn?: unknown }).cairn !== undefined;
}

/** Marin's payload text (`fingerprint_payload`), or undefined. */
export function marinPayload(record: ArtifactRecord): string | undefined {
  const p = (record as { fingerprint_payload?: unknown }).fingerprint_payload;
  return typeof p === 'string' ? p : undefined;
}

const DEP = /^<dep:(.*)>$/s;

/** Cairn's payload data in Marin's form: `<dep:x@v>` → `x@v`, `<OUT>` → `<output_path>`. */
function asMarin(value: unknown): unknown {
  if (typeof value === 'string') {
    if (value === '<OUT>') return '<output_path>';
    const m = DEP.exec(value);
    return m === null ? value : m[1];
  }
  if (Array.isArray(value)) return value.map(asMarin);
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = asMarin(v);
    return out;
  }
  return value;
}

/** Marin's payload data without its runtime-argument placeholders (`"workers": "<workers>"`), which Cairn does not hash. */
function withoutRuntime(value: unknown, runtimeKeys: readonly string[]): unknown {
  if (runtimeKeys.length === 0 || typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (!(runtimeKeys.includes(k) && v === `<${k}>`)) out[k] = v;
  return out;
}

function parse(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/** Equal JSON data. */
export function sameData(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) if (!Object.hasOwn(b, k) || !sameData((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  return true;
}

/** Both payloads in Marin's form, as JSON texts for a diff; undefined when either is not JSON. */
export function comparablePayloads(marin: string, cairn: string, runtimeKeys: readonly string[]): { marin: unknown; cairn: unknown } | undefined {
  const m = parse(marin);
  const c = parse(cairn);
  if (!m.ok || !c.ok) return undefined;
  return { marin: withoutRuntime(m.value, runtimeKeys), cairn: asMarin(c.value) };
}
