/**
 * The worker result format, as `@cairn/runner`'s worker entry writes it (`packValue` of
 * `{ ok: true, result } | { ok: false, error: { name, message, stack, code, retryable } }`), so
 * the executor reads it with the runner's `decodeResult`. The runner does not export its
 * encoder, hence this small copy.
 */
import { CairnError, packValue } from '@cairn/core';

function errorData(err: unknown): Record<string, unknown> {
  if (typeof err === 'object' && err !== null && 'message' in err) {
    const e = err as { name?: unknown; message?: unknown; stack?: unknown; code?: unknown; retryable?: unknown };
    return {
      name: typeof e.name === 'string' ? e.name : 'Error',
      message: String(e.message),
      stack: typeof e.stack === 'string' ? e.stack : undefined,
      code: typeof e.code === 'string' ? e.code : undefined,
      retryable: typeof e.retryable === 'boolean' ? e.retryable : undefined,
    };
  }
  return { name: 'Error', message: String(err) };
}

/** Encodes a failed attempt. */
export function encodeFailure(err: unknown): Uint8Array {
  return packValue({ ok: false, error: errorData(err) });
}

/** Encodes an outcome; a value msgpack cannot carry becomes a `CAIRN_CANONICAL_VALUE` failure. */
export function encodeOutcome(outcome: { ok: true; result: unknown } | { ok: false; error: unknown }): { bytes: Uint8Array; ok: boolean } {
  if (!outcome.ok) return { bytes: encodeFailure(outcome.error), ok: false };
  try {
    return { bytes: packValue({ ok: true, result: outcome.result }), ok: true };
  } catch (cause) {
    const err = new CairnError(
      'CAIRN_CANONICAL_VALUE',
      `The step returned a value that cannot be encoded (${(cause as Error).message}); return plain data (objects, arrays, strings, numbers, Map, Set, Date, bytes) or nothing.`,
    );
    return { bytes: encodeFailure(err), ok: false };
  }
}
