/**
 * Parsers of the step files, with the same rules as the runner's filesystem store
 * (packages/runner/src/store/{leases,records}.ts), which does not export them. Status text is
 * parsed by the runner's own exported `parseStatus`.
 */
import type { ArtifactRecord, JobRecord, LeaseHolder } from '@cairn/runner';

/** Lease text as a holder; null when it is not one. */
export function parseHolder(raw: string): LeaseHolder | null {
  try {
    const v = JSON.parse(raw) as Partial<LeaseHolder> | null;
    return typeof v === 'object' && v !== null && typeof v.timestamp === 'number' ? (v as LeaseHolder) : null;
  } catch {
    return null;
  }
}

/** Record text as a record; `problem` says why it is unusable. */
export function parseRecord(text: string): { record: ArtifactRecord | null; problem?: string } {
  try {
    const v = JSON.parse(text) as unknown;
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return { record: null, problem: 'the record is not a JSON object' };
    return { record: v as ArtifactRecord };
  } catch {
    return { record: null, problem: 'the record is not valid JSON (half-written?)' };
  }
}

/** `.cairn/job.json` text as a job record; null when it is not one. */
export function parseJobRecord(text: string): JobRecord | null {
  try {
    const v = JSON.parse(text) as Partial<JobRecord> | null;
    if (typeof v !== 'object' || v === null || typeof v.executor !== 'string' || typeof v.job?.jobId !== 'string' || typeof v.attempt !== 'number') return null;
    return v as JobRecord;
  } catch {
    return null;
  }
}
