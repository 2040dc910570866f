/**
 * Finds the steps a store holds. The store is keyed by output path and keeps no index, so
 * the prefix is walked: a directory with a status, record or attempt logs is a step (its
 * contents are not descended into), and so is a path with a lease beside it (a step running
 * for the first time has no output directory yet). What the store keeps beside outputs
 * (leases, staged attempts) is not walked.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { localLayout, LocalStore, RECORD_FILE, STATUS_FILE, type ArtifactRecord, type LeaseInfo, type StatusToken } from '@cairn/runner';
import { cliError } from './errors.js';

/** Steps are looked for this many directory levels below the prefix (`name/version` is 2). */
export const MAX_DEPTH = 4;
/** Directories under the prefix that are never steps. */
const SKIP = new Set(['.cairn', 'node_modules', '.git']);

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

function isStepDir(dir: string, names: ReadonlySet<string>): boolean {
  return names.has(STATUS_FILE) || names.has(RECORD_FILE) || existsSync(join(dir, '.cairn', 'logs'));
}

/** The step a lease file beside outputs belongs to (`.{base}.cairn-lease` → `{dir}/{base}`), if it is one. */
function leasedStep(dir: string, name: string): string | undefined {
  const m = /^\.(.+)\.cairn-lease$/.exec(name);
  return m === null ? undefined : join(dir, m[1] as string);
}

/** Output directories of every step under `prefix`. */
export function findStepDirs(prefix: string): string[] {
  return walkStore(prefix).steps;
}

/**
 * Attempt directories and aside outputs the store keeps beside output paths under `prefix`
 * (`.{base}.cairn-attempt-…`, `.{base}.cairn-old-…`), with the output path each belongs to.
 */
export function findStagedDirs(prefix: string): { path: string; step: string }[] {
  return walkStore(prefix).staged;
}

function walkStore(prefix: string): { steps: string[]; staged: { path: string; step: string }[] } {
  if (!existsSync(prefix)) {
    throw cliError('CAIRN_NO_STORE', `The store prefix ${prefix} does not exist.`, 'Check --prefix / CAIRN_PREFIX, or run a pipeline first.');
  }
  const found: string[] = [];
  const staged: { path: string; step: string }[] = [];
  const stack: [string, number][] = [[prefix, 0]];
  while (stack.length > 0) {
    const [dir, depth] = stack.pop() as [string, number];
    let entries: import('node:fs').Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    const names = new Set(entries.map((e) => e.name));
    if (depth > 0 && isStepDir(dir, names)) {
      found.push(dir);
      continue;
    }
    for (const e of entries) {
      const leased = leasedStep(dir, e.name);
      if (leased !== undefined && !names.has(e.name.slice(1, -'.cairn-lease'.length))) found.push(leased);
      const m = /^\.(.+)\.cairn-(?:attempt|old)-/.exec(e.name);
      if (m !== null && e.isDirectory()) staged.push({ path: join(dir, e.name), step: join(dir, m[1] as string) });
    }
    if (depth >= MAX_DEPTH) continue;
    for (const e of entries) {
      if (e.isDirectory() && !(depth === 0 && SKIP.has(e.name)) && e.name !== '.cairn' && !localLayout.isSibling(e.name)) stack.push([join(dir, e.name), depth + 1]);
    }
  }
  return { steps: [...new Set(found)].sort(), staged: staged.sort((a, b) => a.path.localeCompare(b.path)) };
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

function readRecordFile(dir: string): ArtifactRecord | null {
  try {
    return recordFromText(readFileSync(join(dir, RECORD_FILE), 'utf8'));
  } catch {
    return null;
  }
}

/** Reads every step under `prefix`: status, record and lease. */
export async function scanStore(prefix: string): Promise<StoredStep[]> {
  const dirs = findStepDirs(prefix);
  const store = new LocalStore();
  const states = await store.readStates(dirs, true);
  const out: StoredStep[] = [];
  for (let i = 0; i < dirs.length; i++) {
    const path = dirs[i] as string;
    const s = states[i] as (typeof states)[number];
    let record = s.record ?? null;
    // readStates reads a record only next to a status; a failed first attempt may leave only a record.
    if (record === null && s.status === null) record = readRecordFile(path);
    const lease = await store.readLease(path);
    out.push({ path, rel: relative(prefix, path) || '.', status: s.status, record, lease, problem: s.problem });
  }
  return out;
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
