/**
 * Errors of the object store. An SDK error is never passed on as it is: it can carry the
 * request (with its `Authorization` header), the raw response and, for a signature mismatch,
 * the access key id and the string that was signed. Every error leaving this package is a
 * `CairnError` whose `cause` is a plain {@link S3Failure} made of the few fields below, with
 * any credential the store knows scrubbed from the text.
 */
import { CairnError } from '@cairn/core';

/** What went wrong in one S3 request, as plain data (no request, no response, no credentials). */
export class S3Failure extends Error {
  /** The S3 error code (`NoSuchBucket`, `SlowDown`, `PreconditionFailed`) or a Node error code (`ECONNREFUSED`). */
  readonly code: string;
  /** HTTP status, when a response arrived. */
  readonly status: number | undefined;
  /** The provider's request id, for its support. */
  readonly requestId: string | undefined;
  /** Attempts made (retries included). */
  readonly attempts: number | undefined;

  constructor(code: string, message: string, status: number | undefined, requestId: string | undefined, attempts: number | undefined) {
    super(message);
    this.name = 'S3Failure';
    this.code = code;
    this.status = status;
    this.requestId = requestId;
    this.attempts = attempts;
  }
}

interface SdkErrorShape {
  name?: string;
  code?: string;
  Code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number; requestId?: string; attempts?: number };
  cause?: unknown;
}

/** Secrets to scrub from any text that leaves the store (set once credentials are known). */
export class Scrubber {
  readonly #secrets = new Set<string>();

  /** Remembers secrets (empty and very short strings are ignored). */
  add(...secrets: (string | undefined)[]): void {
    for (const s of secrets) if (s !== undefined && s.length >= 4) this.#secrets.add(s);
  }

  /** `text` with every known secret replaced by `***`. */
  scrub(text: string): string {
    let out = text;
    for (const s of this.#secrets) out = out.split(s).join('***');
    // Whatever the store was not told about: signature fragments never leave either.
    return out.replace(/(Credential=)[^,\s]+/g, '$1***').replace(/(Signature=)[0-9a-f]+/g, '$1***');
  }
}

/** The status, code and message of an SDK (or Node network) error as a plain {@link S3Failure}. */
export function toFailure(err: unknown, scrubber: Scrubber): S3Failure {
  if (err instanceof S3Failure) return err;
  const e = (err ?? {}) as SdkErrorShape;
  const status = e.$metadata?.httpStatusCode;
  let code = e.Code ?? (typeof e.code === 'string' ? e.code : undefined) ?? e.name ?? 'Error';
  // A network error often sits one level down (the SDK wraps Node's error).
  const inner = e.cause as SdkErrorShape | undefined;
  if ((code === 'Error' || code === 'TimeoutError') && typeof inner?.code === 'string') code = inner.code;
  if (code === 'Unknown' || code === 'UnknownError') code = status === 404 ? 'NotFound' : status === 403 ? 'AccessDenied' : status === 412 ? 'PreconditionFailed' : `HTTP${String(status ?? '')}`;
  let message = typeof e.message === 'string' && e.message !== '' && e.message !== 'UnknownError' ? e.message : code;
  if (typeof inner?.message === 'string' && !message.includes(inner.message)) message = `${message} (${inner.message})`;
  return new S3Failure(code, scrubber.scrub(message), status, e.$metadata?.requestId, e.$metadata?.attempts);
}

/** HTTP status of an SDK error (undefined for network errors). */
export function statusOf(err: unknown): number | undefined {
  if (err instanceof S3Failure) return err.status;
  return (err as SdkErrorShape | undefined)?.$metadata?.httpStatusCode;
}

/** Attempts the SDK made for a failed request (1 when unknown). */
export function attemptsOf(err: unknown): number {
  return (err as SdkErrorShape | undefined)?.$metadata?.attempts ?? 1;
}

const TRANSIENT = new Set(['SlowDown', 'ServiceUnavailable', 'InternalError', 'RequestTimeout', 'ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'TimeoutError']);

/** A `CAIRN_STORE` error for one failed request on `url`: what failed, why, and what to do. */
export function storeError(what: string, url: string, err: unknown, scrubber: Scrubber, fix?: string): CairnError {
  const f = toFailure(err, scrubber);
  const detail = `${f.code}${f.status !== undefined ? `, HTTP ${f.status}` : ''}${f.attempts !== undefined && f.attempts > 1 ? `, after ${f.attempts} attempts` : ''}`;
  const retryable = TRANSIENT.has(f.code) || (f.status !== undefined && f.status >= 500);
  const advice = fix ?? (retryable ? 'The object store is failing or unreachable; the step can be retried once it answers.' : 'Check the bucket, the prefix and the credentials’ permissions.');
  return new CairnError('CAIRN_STORE', `Cannot ${what} ${url} (${detail}): ${f.message}. ${advice}`, { cause: f, retryable });
}
