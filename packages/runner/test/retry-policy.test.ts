import { describe, expect, it } from 'vitest';
import { type AttemptEnd, decide, type Decision } from '../src/run/retry-policy.js';

type Row = [end: AttemptEnd, infrastructure: boolean, attempts: number, infraRetries: number, retries: number, infraLimit: number, expected: Decision];

// One row per rule, and its edges.
const table: Row[] = [
  ['succeeded', false, 1, 0, 0, 3, 'succeed'],
  ['succeeded', true, 5, 3, 0, 3, 'succeed'], // a success is a success, however it got there
  ['lease-lost', false, 1, 0, 5, 3, 'abandon'], // never retried: the step is another runner's now
  ['cancelled', false, 1, 0, 5, 3, 'cancel'],
  ['failed', false, 1, 0, 0, 3, 'fail'],
  ['failed', false, 1, 0, 1, 3, 'retry'],
  ['failed', false, 2, 0, 1, 3, 'fail'],
  ['timeout', false, 1, 0, 1, 3, 'retry'],
  ['timeout', false, 2, 0, 1, 3, 'fail'],
  ['lost', false, 1, 0, 0, 3, 'retry-infra'], // a lost job is an infrastructure failure
  ['failed', true, 1, 0, 0, 3, 'retry-infra'],
  ['failed', true, 3, 2, 0, 3, 'retry-infra'],
  ['failed', true, 4, 3, 0, 3, 'fail'], // infrastructure retries spent, no own retries
  ['failed', true, 4, 3, 1, 3, 'retry'], // then the step's own retries
  ['failed', true, 5, 3, 1, 3, 'fail'],
  ['lost', false, 1, 0, 0, 0, 'fail'], // infraRetries: 0 turns them off
  ['failed', false, 3, 2, 1, 3, 'retry'], // infrastructure retries do not count against the step's
];

describe('retry policy', () => {
  it.each(table)('%s (infrastructure %s) at attempt %i with %i infra retries, retries %i, infra limit %i → %s', (end, infrastructure, attempts, infraRetries, retries, infraLimit, expected) => {
    expect(decide({ end, infrastructure }, { attempts, infraRetries }, { retries, infraRetries: infraLimit })).toBe(expected);
  });
});
