/**
 * Reading the worker's `result.msgpack` (the worker-entry contract of @cairn/runner:
 * `{ ok: true, result }` or `{ ok: false, error: { name, message, stack, code } }`).
 * @cairn/runner does not export its decoder; this is the same contract, read-only.
 */
import { CairnError, unpackValue, type CairnErrorCode } from '@cairn/core';

/** A flattened error from the worker. */
export interface WorkerErrorData {
  /** `err.name`. */
  readonly name: string;
  /** `err.message`. */
  readonly message: string;
  /** Stack where it was thrown. */
  readonly stack?: string | undefined;
  /** `err.code`, when a string. */
  readonly code?: string | undefined;
}

/** What the worker wrote. */
export type WorkerOutcome = { readonly ok: true; readonly result: unknown } | { readonly ok: false; readonly error: WorkerErrorData };

/** Decodes a result file; anything unexpected throws `CAIRN_CODEC_CORRUPT`. */
export function decodeWorkerResult(bytes: Uint8Array): WorkerOutcome {
  let value: unknown;
  try {
    value = unpackValue(bytes);
  } catch (cause) {
    throw new CairnError('CAIRN_CODEC_CORRUPT', 'Cannot decode a worker result: invalid msgpack. Check the worker and runner use the same Cairn version.', { cause });
  }
  const v = value as { ok?: unknown; error?: { message?: unknown } } | null;
  if (v === null || typeof v !== 'object' || !(v.ok === true || (v.ok === false && typeof v.error?.message === 'string'))) {
    throw new CairnError('CAIRN_CODEC_CORRUPT', 'Cannot decode a worker result: unexpected shape. Check the worker and runner use the same Cairn version.');
  }
  return value as WorkerOutcome;
}

/** The worker's error as an Error on this side: a CairnError when it was one, so `hasCode` works. */
export function toError(data: WorkerErrorData, step: string): Error {
  const cairn = data.name === 'CairnError' && typeof data.code === 'string' && data.code.startsWith('CAIRN_');
  const err = cairn ? new CairnError(data.code as CairnErrorCode, data.message, { step }) : Object.assign(new Error(data.message), data.code === undefined ? {} : { code: data.code });
  if (!cairn) err.name = data.name;
  if (data.stack !== undefined) err.stack = data.stack;
  return err;
}
