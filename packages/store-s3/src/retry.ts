/**
 * Retries of S3 requests: throttling (503 SlowDown), server errors (500, 502, 504) and broken
 * connections (reset, refused, timed out) are retried with full-jitter exponential backoff; a
 * client error (403, 404, 412) never is. A pure policy ({@link retryDelay}) plus the SDK's
 * `RetryStrategyV2` shape around it. Unlike the SDK's standard strategy there is no shared retry
 * quota: a burst of SlowDowns across 64 concurrent steps must slow them down, not fail them.
 */
import type { RetryErrorInfo, RetryErrorType, RetryStrategyV2, RetryToken } from '@smithy/types';

/** Retry timing. */
export interface RetryOptions {
  /** Attempts per request, the first included. @default 6 */
  readonly maxAttempts?: number;
  /** Base delay of transient errors, ms (doubles each retry). @default 100 */
  readonly baseDelayMs?: number;
  /** Base delay after throttling (503 SlowDown), ms. @default 500 */
  readonly throttleDelayMs?: number;
  /** Longest single delay, ms. @default 10_000 */
  readonly maxDelayMs?: number;
}

/**
 * The delay before retry number `retry` (1 = the first retry) after an error of `type`, or
 * null when the request must not be retried. `random` is in [0, 1).
 */
export function retryDelay(type: RetryErrorType, retry: number, options: RetryOptions, random: number): number | null {
  const max = options.maxAttempts ?? 6;
  if (retry >= max) return null;
  if (type === 'CLIENT_ERROR') return null;
  const base = type === 'THROTTLING' ? (options.throttleDelayMs ?? 500) : (options.baseDelayMs ?? 100);
  const ceiling = Math.min(options.maxDelayMs ?? 10_000, base * 2 ** (retry - 1));
  // Full jitter: concurrent clients that failed together do not retry together.
  return Math.floor(random * ceiling);
}

class Token implements RetryToken {
  constructor(
    readonly count: number,
    readonly delay: number,
  ) {}
  getRetryCount(): number {
    return this.count;
  }
  getRetryDelay(): number {
    return this.delay;
  }
}

/** A `RetryStrategyV2` that follows {@link retryDelay}. */
export function retryStrategy(options: RetryOptions = {}, random: () => number = Math.random): RetryStrategyV2 {
  return {
    acquireInitialRetryToken: async () => new Token(0, 0),
    refreshRetryTokenForRetry: async (token: RetryToken, info: RetryErrorInfo) => {
      const retry = token.getRetryCount() + 1;
      const delay = retryDelay(info.errorType, retry, options, random());
      if (delay === null) throw info.error ?? new Error('not retryable');
      const hinted = info.retryAfterHint ? Math.max(0, info.retryAfterHint.getTime() - Date.now()) : 0;
      return new Token(retry, Math.max(delay, Math.min(hinted, options.maxDelayMs ?? 10_000)));
    },
    recordSuccess: () => undefined,
  };
}
