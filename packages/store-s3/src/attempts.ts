/**
 * Where an attempt's output objects live, and how readers find the committed ones. An object
 * store has no rename: an output uploaded to the step's own keys would be visible file by file,
 * mixed with the previous build's objects and with a fenced-out runner's late uploads. So each
 * attempt writes under its own key prefix inside the step directory,
 *
 * ```
 * {outputPath}/@{runId}/…        the output objects of the run that holds (held) the lease
 * ```
 *
 * and the record names the prefix it commits (`objects`, relative to the step directory). The
 * record is one object written in one PUT after every file of the prefix was uploaded and
 * verified, so a reader that resolves through it sees exactly one attempt's objects: the old
 * set until the record is replaced, the new set after. Objects of other prefixes (the previous
 * build, crashed or fenced-out attempts) are deleted after the commit, or by the next runner
 * that takes the lease over; until then no reader sees them.
 *
 * The prefix is the lease holder's run id: a worker in another process or host learns it from
 * the lease object (one GET), since the task names only the step's final URL. A run holds at
 * most one lease per step, so attempts of one run share the prefix, and a retry first empties
 * what the failed attempt wrote there. `@` sorts after the step's dot-files (the metadata), so
 * batched listings still see a step's metadata before its outputs.
 */
import type { ArtifactRecord } from '@cairn/runner/store';

/** The record's field naming the committed attempt's key prefix (relative to the step directory). */
export const OBJECTS_FIELD = 'objects';

/** The attempt key prefix of a run (relative to the step directory, ending in `/`). */
export function attemptPrefix(runId: string): string {
  return `@${runId.replace(/[^A-Za-z0-9._-]/g, '_')}/`;
}

/** True for a key (relative to a step directory) that lies under some attempt's prefix. */
export function isAttemptKey(rel: string): boolean {
  return rel.startsWith('@');
}

/** The attempt prefix of the relative key `rel` (`@run/`), or undefined. */
export function attemptOf(rel: string): string | undefined {
  if (!isAttemptKey(rel)) return undefined;
  const slash = rel.indexOf('/');
  return slash < 0 ? undefined : rel.slice(0, slash + 1);
}

/** `record` naming `prefix` as its committed objects. */
export function withObjects(record: ArtifactRecord, prefix: string): ArtifactRecord {
  return { ...record, [OBJECTS_FIELD]: prefix } as ArtifactRecord;
}

/**
 * The committed prefix a record names: a prefix; `null` for a record of the layout before
 * attempt prefixes (its outputs are the step directory's own non-metadata keys); undefined
 * when the record cannot be read.
 */
export function objectsOf(recordText: string | null): string | null | undefined {
  if (recordText === null) return undefined;
  try {
    const v = (JSON.parse(recordText) as Record<string, unknown> | null)?.[OBJECTS_FIELD];
    return typeof v === 'string' && /^@[^/]+\/$/.test(v) ? v : null;
  } catch {
    return undefined;
  }
}
