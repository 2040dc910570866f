/**
 * Steps as a store holds them, and what the CLI does with a list of them (match a selector,
 * order by the DAG). Finding them is each store's browser's work (`Store.browse.findSteps`,
 * read by store-view.ts): the CLI walks no store itself.
 */
import type { ArtifactRecord, LeaseInfo, StatusToken } from '@cairn/runner';

/** Steps are looked for this many directory levels below the prefix (`name/version` is 2). */
export const MAX_DEPTH = 4;

/** One step as the store holds it. */
export interface StoredStep {
  /** Output path (absolute). */
  readonly path: string;
  /** Output path relative to the prefix. */
  readonly rel: string;
  /** Recorded status; null when none (or unusable). */
  readonly status: StatusToken | null;
  /** The record; null when none. */
  readonly record: ArtifactRecord | null;
  /** The lease, while a runner works on the step. */
  readonly lease: LeaseInfo | null;
  /** Why a file that exists could not be used. */
  readonly problem?: string | undefined;
}

/** A record from its file's text (a record read raw, without a status beside it); null when it is not one. */
export function recordFromText(text: string | null): ArtifactRecord | null {
  if (text === null) return null;
  try {
    const v = JSON.parse(text) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as ArtifactRecord) : null;
  } catch {
    return null;
  }
}

/**
 * Steps matching a selector: the step name, a prefix of `nameWithHash`, or the output path
 * relative to the prefix.
 */
export function matchStored(steps: readonly StoredStep[], selector: string): StoredStep[] {
  const exact = steps.filter((s) => s.record?.name === selector || s.rel === selector || s.record?.nameWithHash === selector);
  if (exact.length > 0) return exact;
  return steps.filter((s) => s.record?.nameWithHash.startsWith(selector) || s.rel.startsWith(selector) || s.rel.split('/')[0] === selector);
}

/**
 * Stored steps in DAG order, as the records' dependency paths say: dependencies before their
 * dependents (by depth: a step comes after its deepest dependency), then by start time, then
 * path. Steps without a record come last.
 */
export function dagOrder(steps: readonly StoredStep[]): StoredStep[] {
  const byPath = new Map(steps.map((s) => [s.path, s]));
  const depth = new Map<string, number>();
  // Iterative depth-first walk (a store may hold long chains); a cycle (impossible for records
  // one runner wrote, but files can be edited) counts its back edge as depth 0.
  const visiting = new Set<string>();
  for (const root of steps) {
    if (depth.has(root.path)) continue;
    const stack: string[] = [root.path];
    while (stack.length > 0) {
      const p = stack[stack.length - 1] as string;
      if (depth.has(p)) {
        stack.pop();
        continue;
      }
      visiting.add(p);
      const deps = (byPath.get(p)?.record?.depPaths ?? []).filter((d) => byPath.has(d) && !visiting.has(d) && !depth.has(d));
      if (deps.length > 0) {
        stack.push(...deps);
        continue;
      }
      let d = 0;
      for (const q of byPath.get(p)?.record?.depPaths ?? []) d = Math.max(d, (depth.get(q) ?? -1) + 1);
      depth.set(p, d);
      visiting.delete(p);
      stack.pop();
    }
  }
  const key = (s: StoredStep) => (s.record === null ? Number.MAX_SAFE_INTEGER : (depth.get(s.path) ?? 0));
  const start = (s: StoredStep) => s.record?.timings?.start ?? Number.MAX_SAFE_INTEGER;
  return [...steps].sort((a, b) => key(a) - key(b) || start(a) - start(b) || (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
}
