import { describe, expect, it } from 'vitest';
import { retryDelay } from '../src/index.js';

describe('retryDelay (the retry policy)', () => {
  it.each([
    // type, retry, random, expected
    ['THROTTLING', 1, 0.5, 250], // base 500 ms, full jitter
    ['THROTTLING', 2, 0.5, 500],
    ['THROTTLING', 3, 0.999, 1998],
    ['TRANSIENT', 1, 0.5, 50], // base 100 ms
    ['TRANSIENT', 4, 0.5, 400],
    ['SERVER_ERROR', 2, 0.25, 50],
    ['TRANSIENT', 12, 0.5, null], // past maxAttempts (6)
    ['CLIENT_ERROR', 1, 0.5, null], // 403, 404, 412 are answers, not faults
  ] as const)('%s, retry %i, random %f → %s', (type, retry, random, expected) => {
    expect(retryDelay(type, retry, { maxAttempts: 6 }, random)).toBe(expected);
  });

  it('never waits longer than maxDelayMs, and jitter spreads the delays', () => {
    expect(retryDelay('THROTTLING', 5, { maxAttempts: 50, maxDelayMs: 3_000 }, 0.9999)).toBeLessThan(3_000);
    const delays = new Set(Array.from({ length: 50 }, (_, i) => retryDelay('TRANSIENT', 3, {}, i / 50)));
    expect(delays.size).toBe(50);
  });
});
