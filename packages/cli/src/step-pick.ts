/**
 * Which stored build a step name means. A store keeps every build of a step (each config or
 * version change is a new output path), so `cairn logs train` may match several. The name means
 * the build the pipeline references now (when a pipeline is given), else the newest build; the
 * other builds are named in one line, with how to pick one. Names that match different steps
 * stay ambiguous (`CAIRN_AMBIGUOUS_STEP`).
 */
import { cliError } from './errors.js';
import type { StoredStep } from './store-scan.js';
import { matchStored } from './store-scan.js';

/** The build a selector resolved to, and the other builds of the same step. */
export interface PickedStep {
  /** The build the command works on. */
  readonly step: StoredStep;
  /** Why this build: the pipeline references it, it is the newest, or it was the only match. */
  readonly why: 'current' | 'newest' | 'only';
  /** Other builds of the same step in the store, newest first. */
  readonly others: readonly StoredStep[];
}

/** The step's name as stored: the record's, else the first path segment (a first build still running). */
export function storedName(s: StoredStep): string {
  return s.record?.name ?? (s.rel.split('/')[0] as string);
}

/** `name-` and the first 8 hex digits of the hash: enough to pick one build. */
export function shortHash(nameWithHash: string, name: string): string {
  const hash = nameWithHash.startsWith(`${name}-`) ? nameWithHash.slice(name.length + 1) : nameWithHash;
  return `${name}-${hash.slice(0, 8)}`;
}

/** How a build is named for the user: its short `nameWithHash`, else its output path. */
export function buildLabel(s: StoredStep): string {
  return s.record !== null ? shortHash(s.record.nameWithHash, s.record.name) : s.rel;
}

/** When the build was made: a running build (a lease, no record yet) is the newest. */
function builtAt(s: StoredStep): number {
  const t = s.record?.timings;
  if (t !== undefined) return t.end ?? t.start;
  return s.lease !== null ? Number.MAX_SAFE_INTEGER : 0;
}

/**
 * Picks one build for `selector` among `steps`; `current` holds the output paths the pipeline
 * references now (empty without a pipeline). No match is `CAIRN_NO_SUCH_STEP`; matches of
 * different steps are `CAIRN_AMBIGUOUS_STEP`.
 */
export function pickStoredStep(steps: readonly StoredStep[], selector: string, prefix: string, current: ReadonlySet<string> = new Set()): PickedStep {
  const matches = matchStored(steps, selector);
  if (matches.length === 0) {
    throw cliError('CAIRN_NO_SUCH_STEP', `No step in ${prefix} matches "${selector}".`, 'Run `cairn status` to see the steps the store holds.');
  }
  if (matches.length === 1) return { step: matches[0] as StoredStep, why: 'only', others: [] };
  const names = [...new Set(matches.map(storedName))];
  if (names.length > 1) {
    const list = matches.slice(0, 10).map(buildLabel);
    throw cliError('CAIRN_AMBIGUOUS_STEP', `"${selector}" matches ${matches.length} steps of ${names.length} names (${list.join(', ')}).`, 'Pass a step name, a longer nameWithHash prefix or the output path.');
  }
  const sorted = [...matches].sort((a, b) => builtAt(b) - builtAt(a) || b.rel.localeCompare(a.rel));
  const referenced = sorted.filter((s) => current.has(s.path));
  const step = (referenced.length === 1 ? referenced[0] : sorted[0]) as StoredStep;
  return { step, why: referenced.length === 1 ? 'current' : 'newest', others: sorted.filter((s) => s !== step) };
}

/** The line naming the other builds and how to pick one (`command` is e.g. `cairn logs`); undefined when there are none. */
export function otherBuildsLine(picked: PickedStep, command: string): string | undefined {
  if (picked.others.length === 0) return undefined;
  const shown = picked.others.slice(0, 5).map(buildLabel);
  const more = picked.others.length > shown.length ? `, … (${picked.others.length} in all)` : '';
  const which = picked.why === 'current' ? 'the build the pipeline references now' : 'the newest build';
  return `note: showing ${buildLabel(picked.step)} (${which}); ${picked.others.length} other build(s) in the store: ${shown.join(', ')}${more}. Pick one with \`${command} ${shown[0]}\`.`;
}
