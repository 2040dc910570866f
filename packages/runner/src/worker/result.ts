/**
 * The result a worker hands back (thread return value, process `result.msgpack`), as data.
 * Shared by every executor that runs `runTask` away from the runner (threads, process, SSH,
 * Slurm), so an error survives the trip with its name, message, stack and code.
 */
import { CairnError, packValue, unpackValue, type CairnErrorCode } from '@cairn/core';
import { describeLoadError } from './user-modules.js';

/** A thrown value, flattened. */
export interface WorkerErrorData {
  /** `err.name` (`Error`, `CairnError`, `TypeError`…). */
  readonly name: string;
  /** `err.message`, or the thrown value as text. */
  readonly message: string;
  /** Stack as captured where it was thrown. */
  readonly stack?: string | undefined;
  /** `err.code`, when it had a string code. */
  readonly code?: string | undefined;
  /** `err.retryable`, when it was a boolean (a `CairnError`'s, or set by the step). */
  readonly retryable?: boolean | undefined;
}

/** What a worker reports for one attempt. */
export type WorkerResult =
  /** The step function returned `result`. */
  | { readonly ok: true; readonly result: unknown }
  /** The step function threw (or was cancelled: `error.code === 'CAIRN_CANCELLED'`). */
  | { readonly ok: false; readonly error: WorkerErrorData };

/** The message, then each cause's (a `cause` does not survive the trip): `…. Cause: file.ts:3:7: …`. */
function messageWithCauses(err: { message?: unknown; cause?: unknown }): string {
  let message = String(err.message);
  const seen = new Set<unknown>([err]);
  for (let c = err.cause, depth = 0; c !== undefined && c !== null && !seen.has(c) && depth < 3; c = (c as { cause?: unknown }).cause, depth++) {
    seen.add(c);
    message += ` Cause: ${describeLoadError(c)}`;
  }
  return message;
}

/** The stack, then each cause's, as Node prints them (`Caused by: …`). */
function stackWithCauses(stack: string, cause: unknown): string {
  const seen = new Set<unknown>();
  for (let c = cause, depth = 0; c !== undefined && c !== null && !seen.has(c) && depth < 3; c = (c as { cause?: unknown }).cause, depth++) {
    seen.add(c);
    const s = (c as { stack?: unknown }).stack;
    stack += `\nCaused by: ${typeof s === 'string' ? s : String((c as { message?: unknown }).message ?? c)}`;
  }
  return stack;
}

/** Flattens any thrown value. */
export function errorData(err: unknown): WorkerErrorData {
  if (err instanceof Error || (typeof err === 'object' && err !== null && 'message' in err)) {
    const e = err as { name?: unknown; message?: unknown; stack?: unknown; code?: unknown; retryable?: unknown; cause?: unknown };
    return {
      name: typeof e.name === 'string' ? e.name : 'Error',
      message: messageWithCauses(e),
      stack: typeof e.stack === 'string' ? stackWithCauses(e.stack, e.cause) : undefined,
      code: typeof e.code === 'string' ? e.code : undefined,
      retryable: typeof e.retryable === 'boolean' ? e.retryable : undefined,
    };
  }
  return { name: 'Error', message: String(err) };
}

/**
 * Rebuilds an Error from {@link WorkerErrorData}: a `CairnError` when it was one (so
 * `hasCode` works on this side), else an `Error` with the original name, stack, code and
 * `retryable`.
 */
export function rebuildError(data: WorkerErrorData, step?: string): Error {
  let err: Error;
  if (data.name === 'CairnError' && data.code !== undefined && data.code.startsWith('CAIRN_')) {
    err = new CairnError(data.code as CairnErrorCode, data.message, { step, retryable: data.retryable });
  } else {
    err = new Error(data.message);
    err.name = data.name;
    if (data.code !== undefined) Object.defineProperty(err, 'code', { value: data.code, enumerable: true, writable: true, configurable: true });
    if (data.retryable !== undefined) Object.defineProperty(err, 'retryable', { value: data.retryable, enumerable: true, writable: true, configurable: true });
  }
  if (data.stack !== undefined) err.stack = data.stack;
  return err;
}

/**
 * Encodes a result. A returned value msgpack cannot carry becomes a failure
 * (`CAIRN_CANONICAL_VALUE`) instead of an exception, so a worker can always report;
 * `ok` says which was encoded.
 */
export function encodeResult(result: WorkerResult): { bytes: Uint8Array; ok: boolean } {
  try {
    return { bytes: packValue(result), ok: result.ok };
  } catch (cause) {
    const err = new CairnError(
      'CAIRN_CANONICAL_VALUE',
      `The step returned a value that cannot be encoded (${errorData(cause).message}); return plain data (objects, arrays, strings, numbers, Map, Set, Date, bytes) or nothing.`,
    );
    return { bytes: packValue(failure(err)), ok: false };
  }
}

/** Decodes {@link encodeResult}'s bytes; anything else throws `CAIRN_CODEC_CORRUPT`. */
export function decodeResult(bytes: Uint8Array): WorkerResult {
  let r: unknown;
  try {
    r = unpackValue(bytes);
  } catch (cause) {
    throw new CairnError('CAIRN_CODEC_CORRUPT', 'Cannot decode a worker result: invalid msgpack. Check the worker and runner use the same Cairn version.', { cause });
  }
  const o = r as { ok?: unknown; error?: { message?: unknown } };
  if (typeof r !== 'object' || r === null || (o.ok !== true && (o.ok !== false || typeof o.error?.message !== 'string'))) {
    throw new CairnError('CAIRN_CODEC_CORRUPT', 'Cannot decode a worker result: unexpected shape. Check the worker and runner use the same Cairn version.');
  }
  return r as WorkerResult;
}

/** Flattens a thrown value into a failed result. */
export function failure(err: unknown): WorkerResult {
  return { ok: false, error: errorData(err) };
}

/** True for a result that says the step was cancelled. */
export function isCancelledResult(r: WorkerResult): boolean {
  return !r.ok && r.error.code === 'CAIRN_CANCELLED';
}
