/**
 * After an attempt of a run that resolved secrets: their values are masked (`***`) in the
 * attempt's error and its log files before anything records, reports or publishes them; then
 * the attempt's names file says so, and readers show its logs as they are (live-mask.ts).
 */
import type { Maybe } from '../maybe.js';
import type { StagedAttempt } from '../store/store.js';
import { markSecretNamesMasked } from './attempt-names.js';
import { maskError, maskFile } from './mask.js';
import type { RunSecrets } from './resolver.js';

/** Masks what attempt `staged` left (in place); undefined at once when the run resolved no secret. */
export function maskAttempt(secrets: RunSecrets, error: unknown, staged: StagedAttempt): Maybe<void> {
  if (!secrets.any) return undefined;
  const values = secrets.values();
  if (error !== undefined) maskError(error, values);
  return Promise.all([maskFile(staged.logs.stdout, values), maskFile(staged.logs.stderr, values)]).then(() => markSecretNamesMasked(staged.logs));
}
